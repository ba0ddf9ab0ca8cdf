#!/usr/bin/env bash
# Device run: how many partition workers (synthesis.partition_workers, pw) keep one H200's GPU
# workers fed, with synthesis on the GPU. cuzk-bench compare of pw = PW_A (default 2, the
# default config) against each of PW_B (default "4 6"), gw 2, j 2, g2 auto; LOG (default 22)
# dense circuit, CURVE (default bn128), PARTS distinct witnesses per proof (4), COUNT proofs
# per arm and round (4), ROUNDS (2), witnesses sent as paths.
# Run on the GPU machine from the repository root, after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/engine-pw.sh", carry
# ["build-device"]).
set -u
LOG=${LOG:-22}
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
B=$CUZK_BIN_DIR
O=${OUT:-/tmp/engine-pw-out}
mkdir -p "$O"
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) cpus; $(date -u '+%F %T') UTC"
curve=${CURVE:-bn128}
n=$(( (1 << LOG) - (1 << (LOG - 6)) ))
d=/tmp/epw/$curve; mkdir -p $d
t0=$(date +%s)
timeout 100 $B/cuzk gen-circuit --constraints $n --curve $curve --profile dense --seed 1 -o $d > /dev/null 2>&1 || echo "gen-circuit failed"
timeout 200 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "setup failed"
wl=()
for s in $(seq 2 ${PARTS:-4}); do
  timeout 60 $B/cuzk gen-witness --circuit $d --seed $s -o $d/w$s.wtns > /dev/null 2>&1 || echo "gen-witness $s failed"
  wl+=(--witness $d/w$s.wtns)
done
echo "$curve 2^$LOG dense: circuit, key, witnesses in $(( $(date +%s) - t0 )) s"
cfg() { # cfg PW FILE
  cat > $2 <<TOML
[daemon]
witness_dir = "$d"
[metrics]
listen = ""
[gpus]
workers_per_device = ${GW:-2}
[synthesis]
partition_workers = $1
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
cfg ${PW_A:-2} $d/a.toml
for pw in ${PW_B:-4 6}; do
  cfg $pw $d/b$pw.toml
  echo "== pw ${PW_A:-2} (A) against pw $pw (B)"
  timeout 300 $CUZK_PYTHON scripts/cuzk-bench compare --circuit c --witness $d/circuit.wtns "${wl[@]}" \
    --witness-paths -c ${COUNT:-4} -j 2 --rounds ${ROUNDS:-2} $d/a.toml $d/b$pw.toml 2>&1 | tee $O/compare-pw$pw.txt | tail -5
done
rm -rf $d
