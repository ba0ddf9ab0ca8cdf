# Sourced by the NTT device scripts (ntt-geometry.sh, ntt-sizes.sh, ntt-radix.sh): unpacks a
# pack of scripts/device-pack and runs the correctness checks they start with.
#   dev_unpack DIR       unpack ${CUZK_PACK:-build-device/cuzk-device.tar.xz} into DIR and
#                        source its env.sh (CUZK_BIN_DIR, LD_LIBRARY_PATH, ...); a tarball of
#                        scripts/device/build-variants.sh (bin/cuzk-bench-gpu alone, no env.sh)
#                        gets CUZK_BIN_DIR only: enough for the scripts that run just the bench
#                        (msm-knobs.sh with SKIP_TEST=1)
#   dev_header           the device, its driver and the time, one line
#   dev_gpu_test LOG [ENV=VALUE...]
#                        gpu_test --quick with the given environment, its result on one line
#                        and its first failures
#   dev_staged_test LOG  staged_test (the engine's stages on the device), its result on one line
#   dev_prove_test LOG   tests/gpu/gpu_prove_test.sh (GPU proofs byte-identical to the CPU's
#                        at r = s = 0, snarkjs on blinded ones where node is present)
#   dev_ncu_stalls FILE LOGN [ENV=VALUE...]
#                        ncu on three k_ntt_pass* launches of one forward BN254 NTT of 2^LOGN
#                        (cuzk-bench-gpu): duration, FMA pipe and issue use, active warps and
#                        the warp stall reasons per issued instruction, kept in FILE; prints
#                        the kernels and every reason of 0.3 cycles or more
#   knob_env KNOB / knob_args KNOB
#                        an A/B script's setting ("default", or comma-separated VAR=VALUE
#                        assignments and --flags, a flag's value after '=': --inf-every=5):
#                        its assignments for env / its flags for the program, space-separated
#                        (nothing for "default")
knob_env() { [ "$1" = default ] || echo "$1" | tr ',' '\n' | grep -v '^--' | tr '\n' ' '; }
knob_args() { [ "$1" = default ] || echo "$1" | tr ',' '\n' | grep '^--' | sed 's/=/ /' | tr '\n' ' '; }
dev_unpack() {
  mkdir -p "$1" && tar -xJf "${CUZK_PACK:-build-device/cuzk-device.tar.xz}" -C "$1" || return
  if [ -f "$1/env.sh" ]; then . "$1/env.sh"; else export CUZK_BIN_DIR=$1/bin; fi
}
dev_header() {
  echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(date -u '+%F %T') UTC"
}
dev_gpu_test() {
  local log=$1 t0 rc
  shift
  t0=$(date +%s)
  env "$@" CUZK_GPU_TEST_QUICK=1 timeout 200 "$CUZK_BIN_DIR/gpu_test" > "$log" 2>&1
  rc=$?
  echo "gpu_test --quick${*:+ ($*)}: rc=$rc ($(( $(date +%s) - t0 )) s): $(tail -1 "$log")"
  grep -E "MISMATCH|FAIL" "$log" | head -5
}
dev_ncu_stalls() {
  local f=$1 ln=$2 rc
  shift 2
  env "$@" timeout 120 ncu --clock-control none -k regex:k_ntt_pass --launch-skip 3 --launch-count 3 \
    --metrics gpu__time_duration.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
    "$CUZK_BIN_DIR/cuzk-bench-gpu" --only ntt-bn254 --logs "$ln" --max-log "$ln" --reps 1 > "$f" 2>&1
  rc=$?
  echo "ncu rc=$rc"
  awk '/k_ntt_pass/ {print "  " substr($0, 1, 60)} /duration|pct_of_peak|stalled/ && $NF+0 >= 0.3 {print "    " $1, $NF}' \
    "$f" | head -60
}
dev_staged_test() {
  local t0
  t0=$(date +%s)
  timeout 150 "$CUZK_BIN_DIR/staged_test" > "$1" 2>&1
  echo "staged_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 "$1")"
}
dev_prove_test() {
  local t0 rc
  t0=$(date +%s)
  timeout 120 tests/gpu/gpu_prove_test.sh > "$1" 2>&1
  rc=$?
  echo "gpu_prove_test rc=$rc ($(( $(date +%s) - t0 )) s): $(tail -1 "$1")"
}
