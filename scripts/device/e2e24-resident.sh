#!/usr/bin/env bash
# Device run: issue 5's full-proof row with the key resident, and issue 6's key cache (format 3)
# on the device machine. Run from the repository root on the GPU machine after
# scripts/device-pack here, with build-device carried (device tool: run
# "bash scripts/device/e2e24-resident.sh", carry ["build-device"]).
#  1. Both curves, 2^24 dense (cuzk gen-circuit + cuzk setup): `cuzk prove --backend gpu --g2 gpu
#     --repeat 4` loads the key once and proves four times; the first proof uploads the key's
#     points, the others run with them resident (as the daemon does). Each proof is
#     self-verified; the last one is copied to $OUT with its key's vk for snarkjs.
#  2. The 2^22 BLS12-381 sparse-bits key (the one of the format-1 figure): cuzk-daemon started
#     with preload twice, first from the zkey (writing the cache), then from the cache.
# Env: CURVES (default "bn128 bls12381"), REPEAT (4), CACHE (1: run part 2), SYNTHS (where a, b,
# c are synthesized, one --repeat run each: default "gpu"; "gpu cpu" compares), BA_MODES
# (CUZK_GPU_BATCH_AFFINE values, one --repeat run each, e.g. "0 1 auto"; unset: the default),
# TABLES (--gpu-tables values, one --repeat run each, e.g. "off on"; default "auto"), KNOBS
# (settings as msm-knobs.sh's, one --repeat run each: "default" or VAR=VALUE[,VAR=VALUE...];
# default "default"). Each run prints its peak device memory (nvidia-smi memory.used, sampled
# every 200 ms).
set -u
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
B=$CUZK_BIN_DIR
O=${OUT:-/tmp/cuzk-resident-out}
mkdir -p "$O"
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus; $(date -u '+%F %T') UTC"
n=$(( (1 << 24) - (1 << 18) ))
. scripts/device/common.sh # knob_env
for curve in ${CURVES:-bn128 bls12381}; do
  d=/tmp/e2e/$curve; mkdir -p $d
  t0=$(date +%s)
  timeout 120 $B/cuzk gen-circuit --constraints $n --curve $curve --profile dense --seed 1 -o $d > /dev/null 2>&1 || echo "$curve: gen-circuit failed"
  timeout 240 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "$curve: setup failed"
  echo "$curve 2^24 dense: circuit + key in $(( $(date +%s) - t0 )) s"
  for synth in ${SYNTHS:-gpu}; do
    for m in ${BA_MODES:-default}; do
     for tab in ${TABLES:-auto}; do
      ki=0
      for k in ${KNOBS:-default}; do
      ki=$((ki + 1))
      if [ "$m" = default ]; then
        echo "--synth $synth --gpu-tables $tab, $k:"; f=$O/resident-$curve-$synth-tab$tab-k$ki.txt
      else
        echo "--synth $synth --gpu-tables $tab, CUZK_GPU_BATCH_AFFINE=$m, $k:"; f=$O/resident-$curve-$synth-tab$tab-ba$m-k$ki.txt
      fi
      nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > $f.mem 2>/dev/null &
      smi=$!
      ( [ "$m" = default ] || export CUZK_GPU_BATCH_AFFINE=$m
        env $(knob_env "$k") timeout 150 $B/cuzk prove --backend gpu --g2 gpu --synth $synth --gpu-tables $tab --repeat ${REPEAT:-4} $d/circuit.zkey \
          $d/circuit.wtns $d/p.json $d/pub.json 2>&1 | tail -$(( ${REPEAT:-4} + 2 )) | tee $f )
      kill $smi 2>/dev/null; wait $smi 2>/dev/null
      echo "  peak device memory: $(sort -n $f.mem | tail -1) of $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits) MiB"
      done
     done
    done
  done
  cp $d/p.json $O/e2e-$curve-proof.json; cp $d/pub.json $O/e2e-$curve-public.json
  $B/cuzk export-vk $d/circuit.zkey $O/e2e-$curve-vk.json
  rm -rf $d
done
[ "${CACHE:-1}" = 1 ] || exit 0
d=/tmp/kc; mkdir -p $d
n=$(( (1 << 22) - (1 << 16) ))
t0=$(date +%s)
timeout 60 $B/cuzk gen-circuit --constraints $n --curve bls12381 --profile sparse-bits --seed 1 -o $d > /dev/null 2>&1 || echo "gen-circuit failed"
timeout 120 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "setup failed"
echo "2^22 BLS12-381 sparse-bits key: $(du -h $d/circuit.zkey | cut -f1) in $(( $(date +%s) - t0 )) s"
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
ls -la $d
