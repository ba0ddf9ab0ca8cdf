#!/usr/bin/env bash
# End-to-end proofs with the key resident: for each of CURVES (default "bn128 bls12381") a
# synthetic circuit of 2^LOG constraints (default 24, PROFILE dense) and its test key, then
# `cuzk prove --backend gpu --repeat REPEAT` (default 4) once per SETTINGS entry (default
# "default"; e.g. "default --synth=cpu --gpu-tables=off": common.sh's knob_args): the key loads
# once, the first proof uploads its points, the later ones run with them resident, as in the
# daemon. Every proof is self-verified and the last one checked again by `cuzk verify`; each run
# prints its peak device memory. CACHE=1 (default) then times cuzk-daemon's start with a
# preloaded 2^22 BLS12-381 sparse-bits key, from the zkey (writing the key cache) and from the
# cache.
#   bash scripts/device/e2e-proof.sh     (see common.sh: the pack, $OUT)
set -u
O=${OUT:-/tmp/e2e-proof-out}
mkdir -p "$O"
. scripts/device/common.sh
[ -n "${CUZK_BIN_DIR:-}" ] || dev_unpack /tmp/czk || { echo "e2e-proof: no pack" >&2; exit 2; }
B=$CUZK_BIN_DIR
REPEAT=${REPEAT:-4}
dev_header
for curve in ${CURVES-bn128 bls12381}; do
  d=/tmp/e2e/$curve
  dev_key $d "$curve" "${LOG:-24}" "${PROFILE:-dense}" || continue
  for k in ${SETTINGS:-default}; do
    echo "-- $curve: $k"
    f=$O/e2e-$curve-$(echo "$k" | tr -c 'A-Za-z0-9=\n' _).txt
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$f.mem" 2>/dev/null &
    smi=$!
    env $(knob_env "$k") timeout 300 $B/cuzk prove --backend gpu --repeat "$REPEAT" \
      $(knob_args "$k") $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json 2>&1 |
      tail -$(( REPEAT + 2 )) | tee "$f"
    kill $smi 2>/dev/null; wait $smi 2>/dev/null
    echo "  peak device memory: $(sort -n "$f.mem" | tail -1) of" \
      "$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1) MiB"
    $B/cuzk verify $d/vk.json $d/pub.json $d/p.json > /dev/null 2>&1 && echo "  verify OK" ||
      echo "  verify FAILED"
  done
  cp $d/p.json "$O/e2e-$curve-proof.json"; cp $d/pub.json "$O/e2e-$curve-public.json"
  cp $d/vk.json "$O/e2e-$curve-vk.json"
  rm -rf $d
done
if [ "${CACHE:-1}" = 1 ]; then
  d=/tmp/kc
  dev_key $d bls12381 22 sparse-bits
  cat > $d/kc.toml <<TOML
[daemon]
listen = "127.0.0.1:19830"
[metrics]
listen = ""
[[circuit]]
id = "kc"
zkey = "$d/circuit.zkey"
preload = true
TOML
  for run in zkey cache; do
    t0=$(date +%s%N)
    $CUZK_DAEMON --config $d/kc.toml > $d/$run.log 2>&1 &
    pid=$!
    for _ in $(seq 600); do grep -q "ready, serving" $d/$run.log && break; sleep 0.2; done
    echo "daemon start from the $run: ready after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    grep -E "proving key loaded|key cache|staged" $d/$run.log | sed 's/^/  /'
    kill -TERM $pid; wait $pid
  done
  rm -rf $d
fi
echo "== end $(date -u '+%T')"
