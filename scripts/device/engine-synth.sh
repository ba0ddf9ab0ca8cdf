#!/usr/bin/env bash
# Device run: the engine's synthesis on the GPU (gpus.synth = "gpu", the default) checked and
# compared with synthesis on the CPU (gpus.synth = "cpu").
# Run on the GPU machine from the repository root, after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/engine-synth.sh", carry
# ["build-device"]).
#  1. staged_test (g1 / g1g2 on GPU 0, synthesis deferred to the device or not), gpu_prove_test
#     (CLI proofs byte-identical to the CPU's), gpu_daemon_test (the daemon's GPU workers).
#  2. cuzk-bench compare, synth "gpu" against "cpu": LOG (default 22) dense circuit, CURVES
#     (default bn128), PARTS distinct witnesses per proof (default 4), COUNT proofs per arm and
#     round (4), ROUNDS (2); gw 2, pw 2, j 2, g2 auto, witnesses sent as paths. COMPARE=0
#     skips it. BATCH=1 first runs one daemon (synth gpu, CUZK_GPU_TRACE=1) for a batch of COUNT
#     proofs: stage times per partition, and each device phase in OUT/daemon-trace-CURVE.log.
#     TESTS=0 skips part 1.
set -u
LOG=${LOG:-22}
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
B=$CUZK_BIN_DIR
O=${OUT:-/tmp/engine-synth-out}
mkdir -p "$O"
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) cpus; python $CUZK_PYTHON; $(date -u '+%F %T') UTC"
if [ "${TESTS:-1}" = 1 ]; then
t0=$(date +%s)
timeout 120 $B/staged_test > $O/staged.log 2>&1; echo "staged_test rc=$? $(tail -1 $O/staged.log) ($(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
timeout 150 tests/gpu/gpu_prove_test.sh > $O/prove.log 2>&1; echo "gpu_prove_test rc=$? $(tail -1 $O/prove.log) ($(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
timeout 180 tests/gpu/gpu_daemon_test.sh > $O/daemon.log 2>&1; echo "gpu_daemon_test rc=$? $(tail -1 $O/daemon.log) ($(( $(date +%s) - t0 )) s)"
fi
n=$(( (1 << LOG) - (1 << (LOG - 6)) ))
for curve in ${CURVES:-bn128}; do
  d=/tmp/es/$curve; mkdir -p $d
  t0=$(date +%s)
  timeout 100 $B/cuzk gen-circuit --constraints $n --curve $curve --profile dense --seed 1 -o $d > /dev/null 2>&1 || echo "$curve: gen-circuit failed"
  timeout 200 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "$curve: setup failed"
  wl=()
  for s in $(seq 2 ${PARTS:-4}); do
    timeout 60 $B/cuzk gen-witness --circuit $d --seed $s -o $d/w$s.wtns > /dev/null 2>&1 || echo "gen-witness $s failed"
    wl+=(--witness $d/w$s.wtns)
  done
  echo "$curve 2^$LOG dense: circuit, key, witnesses in $(( $(date +%s) - t0 )) s"
  port=19843
  for s in gpu cpu; do
    port=$((port + 1))
    cat > $d/$s.toml <<TOML
[daemon]
listen = "127.0.0.1:$port"
witness_dir = "$d"
[metrics]
listen = ""
[gpus]
workers_per_device = 2
synth = "$s"
[synthesis]
partition_workers = 2
[scheduler]
max_jobs_in_flight = 2
[keys]
cache = false
[[circuit]]
id = "c"
zkey = "$d/circuit.zkey"
preload = true
TOML
  done
  if [ "${BATCH:-0}" = 1 ]; then
    # One daemon (synth gpu) with CUZK_GPU_TRACE=1: the stage times per partition (cuzk-bench)
    # and every device phase (the daemon's log).
    CUZK_GPU_TRACE=1 $CUZK_DAEMON --config $d/gpu.toml > /dev/null 2> $O/daemon-trace-$curve.log &
    dp=$!
    for _ in $(seq 120); do grep -q "serving" $O/daemon-trace-$curve.log 2>/dev/null && break; sleep 0.5; done
    timeout 300 $CUZK_PYTHON scripts/cuzk-bench --addr 127.0.0.1:19844 --pid $dp batch --circuit c \
      --witness $d/circuit.wtns "${wl[@]}" --witness-paths -c ${COUNT:-4} -j 2 2>&1 | tail -12
    kill $dp; wait $dp
    grep -c "" $O/daemon-trace-$curve.log
  fi
  [ "${COMPARE:-1}" = 1 ] && timeout 420 $CUZK_PYTHON scripts/cuzk-bench compare --circuit c --witness $d/circuit.wtns "${wl[@]}" \
    --witness-paths -c ${COUNT:-4} -j 2 --rounds ${ROUNDS:-2} $d/gpu.toml $d/cpu.toml 2>&1 | tee $O/compare-$curve.txt | tail -30
  rm -rf $d
done
