# Sourced by the scripts of scripts/device/: unpack a pack of scripts/device-pack and run the
# device's correctness checks. Every script here runs from the repository root on a GPU machine
# after scripts/device-pack built build-device/cuzk-device.tar.xz (and copied it there), and
# writes its report under $OUT (default /tmp/NAME-out).
#   dev_unpack DIR       unpack ${CUZK_PACK:-build-device/cuzk-device.tar.xz} into DIR and
#                        source its env.sh (CUZK_BIN_DIR, CUZK_DAEMON, LD_LIBRARY_PATH, ...)
#   dev_header           the device, its driver and the time, one line
#   dev_gpu_test LOG [ENV=VALUE...]
#                        gpu_test --quick with the given environment, its result on one line
#                        and its first failures
#   dev_staged_test LOG  staged_test (the engine's stages on the device), its result on one line
#   dev_prove_test LOG   tests/gpu/gpu_prove_test.sh (GPU proofs byte-identical to the CPU's
#                        at r = s = 0, snarkjs on blinded ones where node is present)
#   dev_key DIR CURVE LOG [PROFILE]
#                        a synthetic circuit of 2^LOG constraints (cuzk gen-circuit, default
#                        profile dense), its test key (cuzk setup) and vk.json in DIR
#   knob_env SETTING / knob_args SETTING
#                        an A/B script's setting ("default", or comma-separated VAR=VALUE
#                        assignments and --flags, a flag's value after '=': --synth=cpu): its
#                        assignments for env / its flags for the program (nothing for "default")
knob_env() { [ "$1" = default ] || echo "$1" | tr ',' '\n' | grep -v '^--' | tr '\n' ' '; }
knob_args() { [ "$1" = default ] || echo "$1" | tr ',' '\n' | grep '^--' | sed 's/=/ /' | tr '\n' ' '; }
dev_unpack() {
  mkdir -p "$1" && tar -xJf "${CUZK_PACK:-build-device/cuzk-device.tar.xz}" -C "$1" || return
  if [ -f "$1/env.sh" ]; then . "$1/env.sh"; else export CUZK_BIN_DIR=$1/bin; fi
}
dev_header() {
  echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus;" \
    "$(date -u '+%F %T') UTC"
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
dev_key() {
  local d=$1 curve=$2 lg=$3 n t0
  # constraints so that the domain is exactly 2^lg (it must exceed constraints + public inputs)
  n=$(( (1 << lg) - (1 << (lg - 6)) ))
  mkdir -p "$d"
  t0=$(date +%s)
  timeout 300 "$CUZK_BIN_DIR/cuzk" gen-circuit --constraints $n --curve "$curve" \
    --profile "${4:-dense}" --seed 1 -o "$d" > /dev/null 2>&1 || { echo "gen-circuit failed"; return 1; }
  timeout 400 "$CUZK_BIN_DIR/cuzk" setup --quiet --seed 01 "$d/circuit.r1cs" "$d/circuit.zkey" \
    > /dev/null 2>&1 || { echo "setup failed"; return 1; }
  "$CUZK_BIN_DIR/cuzk" export-vk "$d/circuit.zkey" "$d/vk.json" > /dev/null 2>&1 ||
    { echo "export-vk failed"; return 1; }
  echo "$curve 2^$lg ${4:-dense}: circuit + key in $(( $(date +%s) - t0 )) s"
}
