#!/usr/bin/env bash
# The daemon on a GPU machine: GPU CLI proofs against the CPU's (tests/gpu/gpu_prove_test.sh),
# the daemon with GPU workers (tests/gpu/gpu_daemon_test.sh, its proofs kept under $OUT for
# snarkjs), then the PoRep-shaped benchmark: scripts/porep-bench at 2^LOG (first argument,
# default 22) with witnesses sent as paths, COUNT proofs (default 2) and a compare over GRID
# (default "2:2:2 1:2:2 2:4:2", gw:pw:j).
#   bash scripts/device/daemon-porep.sh [LOG]     (see common.sh: the pack, $OUT)
# With GENERATED=1 only the benchmark runs, at any LOG up to 27, with nothing on disk: the key
# generated in the daemon and each partition's witness from its seed (porep-bench --generated),
# GRID's first gw:pw:j (default 1:2:1), BUDGET as memory.working_budget, GPU_BUDGET to stream
# the key, PINNED_BUDGET as memory.pinned_budget, SEGMENT as the circuit's runs (porep-bench
# --segment), COUNT proofs, LIMIT seconds at most (default 540); host and GPU memory are sampled
# every 2 s into $OUT/monitor.log, and the daemon's log is kept in $OUT/daemon.log.
set -u
LOG=${1:-22}
O=${OUT:-/tmp/daemon-porep-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/cz || { echo "daemon-porep: cannot unpack the pack" >&2; exit 2; }
dev_header
if [ -n "${GENERATED:-}" ]; then
  (while :; do
     echo "$(date -u +%T) host_used_mib=$(free -m | awk '/^Mem:/ {print $3}')" \
          "gpu_used_mib=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)" \
          "daemon_rss_kib=$(ps -C cuzk-daemon -o rss= | head -1 | tr -d ' ')"
     sleep 2
   done) > "$O/monitor.log" 2>&1 &
  mon=$!
  t0=$(date +%s)
  rm -rf /tmp/porep # an earlier run's daemon log is not this one's
  timeout "${LIMIT:-540}" scripts/porep-bench --generated --log "$LOG" --bin "$CUZK_BIN_DIR" \
    --out /tmp/porep --count "${COUNT:-1}" --no-compare --grid "${GRID:-1:2:1}" \
    ${BUDGET:+--budget "$BUDGET"} ${GPU_BUDGET:+--gpu-budget "$GPU_BUDGET"} \
    ${PINNED_BUDGET:+--pinned-budget "$PINNED_BUDGET"} \
    ${SEGMENT:+--segment "$SEGMENT"} > "$O/porep.log" 2>&1
  echo "porep-bench --generated rc=$? ($(( $(date +%s) - t0 )) s)"
  kill "$mon"
  tail -25 "$O/porep.log"
  cp /tmp/porep/daemon.log "$O/" 2>/dev/null
  grep -E "key loaded|engine started|registered|staged|stream|fault|ERROR|WARN" "$O/daemon.log" \
    | grep -v "batched MSMs over" | cut -c1-300 | head -20
  echo "batched MSMs: $(grep -c "batched MSMs over" "$O/daemon.log") batches;" \
    "$(grep -o "partitions=[0-9]* sets=[^ ]* ms=[0-9.]*" "$O/daemon.log" | head -6 | tr '\n' ' ')"
  grep "partition proved" "$O/daemon.log" | awk '{for (i = 1; i <= NF; i++) \
      if (split($i, kv, "=") == 2 && kv[1] ~ /_ms$/) {s[kv[1]] += kv[2]; if (!(kv[1] in o)) \
      o[kv[1]] = ++m; name[o[kv[1]]] = kv[1]} n++} END {if (n) {printf "partitions: %d, mean", n; \
      for (k = 1; k <= m; k++) printf " %s=%.0f", name[k], s[name[k]] / n; print ""}}'
  awk '{split($2,a,"="); split($3,b,"="); if (a[2]>h) h=a[2]; if (b[2]>g) g=b[2]} END \
       {print "monitor: peak host used " h " MiB, peak GPU used " g " MiB"}' "$O/monitor.log"
  tar -czf "$O/porep.tgz" -C /tmp porep
  echo "== end $(date -u '+%T')"
  exit 0
fi
echo "python: $CUZK_PYTHON"
dev_prove_test "$O/prove.log"
t0=$(date +%s)
GPU_TEST_OUT=/tmp/dproofs timeout 180 tests/gpu/gpu_daemon_test.sh > "$O/daemon.log" 2>&1
echo "gpu_daemon_test rc=$? ($(( $(date +%s) - t0 )) s)"; tail -4 "$O/daemon.log"
tar -czf "$O/dproofs.tgz" -C /tmp dproofs
t0=$(date +%s)
timeout 330 scripts/porep-bench --log "$LOG" --paths --bin "$CUZK_BIN_DIR" --out /tmp/porep \
  --count "${COUNT:-2}" --rounds 1 --grid "${GRID:-2:2:2 1:2:2 2:4:2}" > "$O/porep.log" 2>&1
echo "porep-bench rc=$? ($(( $(date +%s) - t0 )) s)"
tail -40 "$O/porep.log"
grep -h "proving key loaded\|key cache" /tmp/porep/*.err /tmp/porep/*/*.log 2>/dev/null | head -8
tar -czf "$O/porep.tgz" --exclude=circuit -C /tmp porep
echo "== end $(date -u '+%T')"
