#!/usr/bin/env bash
# Device run: the daemon's GPU workers with their batch-affine chunk fitted to the memory the
# preloaded keys leave (gpus.ba_fit = true, the default) against the 4 GiB they kept before
# (false): cuzk-bench compare, gw GW (2), pw 2, j 2, g2 "gpu"; a 2^LOG (24) dense circuit of
# CURVE (bn128), PARTS distinct witnesses per proof (2), COUNT proofs per arm and round (3),
# ROUNDS (2), witnesses sent as paths. Each daemon's log line "batch-affine chunk fitted"
# (or why not) is printed. Run on the GPU machine from the repository root, after
# scripts/device-pack here, with build-device carried (device tool: run
# "bash scripts/device/daemon-fit.sh", carry ["build-device"]). Writes $OUT/daemon-fit.txt.
set -u
LOG=${LOG:-24}
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
B=$CUZK_BIN_DIR
O=${OUT:-/tmp/daemon-fit-out}
mkdir -p "$O"
{
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) cpus; $(date -u '+%F %T') UTC"
curve=${CURVE:-bn128}
n=$(( (1 << LOG) - (1 << (LOG - 6)) ))
d=/tmp/dfit/$curve; mkdir -p $d
t0=$(date +%s)
timeout 150 $B/cuzk gen-circuit --constraints $n --curve $curve --profile dense --seed 1 -o $d > /dev/null 2>&1 || echo "gen-circuit failed"
timeout 300 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "setup failed"
wl=()
for s in $(seq 2 ${PARTS:-2}); do
  timeout 60 $B/cuzk gen-witness --circuit $d --seed $s -o $d/w$s.wtns > /dev/null 2>&1 || echo "gen-witness $s failed"
  wl+=(--witness $d/w$s.wtns)
done
echo "$curve 2^$LOG dense: circuit, key, witnesses in $(( $(date +%s) - t0 )) s"
cfg() { # cfg BA_FIT FILE
  cat > $2 <<TOML
[daemon]
witness_dir = "$d"
[metrics]
listen = ""
[gpus]
workers_per_device = ${GW:-2}
g2 = "gpu"
ba_fit = $1
[scheduler]
max_jobs_in_flight = 2
[keys]
cache = false
[[circuit]]
id = "c"
zkey = "$d/circuit.zkey"
preload = true
TOML
}
cfg false $d/a.toml
cfg true $d/b.toml
# The fit's log line: one daemon start with the fitted config, stopped once ready.
timeout 120 $B/cuzk-daemon --config $d/b.toml > $O/daemon-b.log 2>&1 &
dp=$!
for _ in $(seq 1 110); do grep -q "engine started" $O/daemon-b.log && break; sleep 1; done
kill $dp 2>/dev/null; wait $dp 2>/dev/null
grep -E "batch-affine chunk|GPU key budget|not staged|without fixed-base" $O/daemon-b.log | cut -c1-300
echo "== ba_fit = false (A) against true (B)"
timeout 420 $CUZK_PYTHON scripts/cuzk-bench compare --circuit c --witness $d/circuit.wtns "${wl[@]}" \
  --witness-paths -c ${COUNT:-3} -j 2 --rounds ${ROUNDS:-2} $d/a.toml $d/b.toml 2>&1 | tail -12
rm -rf $d
echo "== end $(date -u '+%T')"
} > "$O/daemon-fit.txt" 2>&1
cat "$O/daemon-fit.txt"
