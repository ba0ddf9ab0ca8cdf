#!/usr/bin/env bash
# CPU provers side by side: cuzk (CPU backend), rapidsnark and snarkjs on the same generated
# circuits, whole-process wall time and peak RSS (/usr/bin/time), median of RUNS runs.
#
# Usage: bench/cpu-peers.sh [--rapidsnark PATH] [--snarkjs PATH] [--runs N]
#                           [--sizes "16 18 20"] [--curves "bn128 bls12381"] [--work DIR]
#                           [--snarkjs-max LOG2]
# Inputs are made once in DIR (default $TMPDIR/cuzk-cpu-peers) with `cuzk gen-circuit` (dense
# profile, 2^k - 200 constraints, so the domain is 2^k) and `cuzk setup --seed 01`.
# rapidsnark (iden3's `prover`, BN254 only) is built outside this repository; without
# --rapidsnark its rows say "not given". snarkjs runs up to 2^snarkjs-max (default 16).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cuzk=${CUZK:-$root/build/bin/cuzk}
rapidsnark=""
snarkjs=$root/node_modules/.bin/snarkjs
runs=3
sizes="16 18 20"
curves="bn128 bls12381"
work=${TMPDIR:-/tmp}/cuzk-cpu-peers
snarkjs_max=16
while [ $# -gt 0 ]; do
    case $1 in
        --rapidsnark) rapidsnark=$2; shift 2 ;;
        --snarkjs) snarkjs=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --curves) curves=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --snarkjs-max) snarkjs_max=$2; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "cpu-peers: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ ! -x /usr/bin/time ]; then
    echo "cpu-peers: needs /usr/bin/time (apt-get install time)" >&2
    exit 2
fi
[ -x "$cuzk" ] || { echo "cpu-peers: no cuzk at $cuzk (build first, or set CUZK)" >&2; exit 2; }
mkdir -p "$work"

# median of the numbers on stdin
median() {
    sort -g | awk '{v[NR] = $1}
        END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# run NAME CMD...: RUNS runs; prints "NAME  wall_s  peak_MiB" (medians) or the failure
run() {
    local name=$1; shift
    local ts=() ms=() i
    for ((i = 0; i < runs; i++)); do
        if ! /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >"$work/out.txt" 2>&1; then
            printf '  %-12s failed: %s\n' "$name" "$(tail -1 "$work/out.txt")"
            return
        fi
        read -r t m <"$work/time.txt"
        ts+=("$t"); ms+=("$m")
    done
    printf '  %-12s %8.2f s %8.0f MiB\n' "$name" \
        "$(printf '%s\n' "${ts[@]}" | median)" \
        "$(printf '%s\n' "${ms[@]}" | median | awk '{print $1 / 1024}')"
}

echo "cpu-peers: $(nproc) cores, $runs runs each (medians), load $(cut -d' ' -f1-3 /proc/loadavg)"
for curve in $curves; do
    for k in $sizes; do
        d=$work/d${k}_$curve
        if [ ! -f "$d/circuit.zkey" ]; then
            "$cuzk" gen-circuit --constraints $((2 ** k - 200)) --curve "$curve" -o "$d" --quiet
            "$cuzk" setup --seed 01 --quiet "$d/circuit.r1cs" "$d/circuit.zkey" 2>/dev/null
        fi
        echo "$curve 2^$k dense ($((2 ** k - 200)) constraints):"
        run cuzk "$cuzk" prove --backend cpu --quiet "$d/circuit.zkey" "$d/circuit.wtns" \
            "$work/proof.json" "$work/public.json"
        run "cuzk cache" "$cuzk" prove --backend cpu --quiet --key-cache auto \
            "$d/circuit.zkey" "$d/circuit.wtns" "$work/proof.json" "$work/public.json"
        if [ -z "$rapidsnark" ]; then
            printf '  %-12s not given (--rapidsnark PATH)\n' rapidsnark
        elif [ "$curve" != bn128 ]; then
            printf '  %-12s BN254 only\n' rapidsnark
        else
            run rapidsnark "$rapidsnark" "$d/circuit.zkey" "$d/circuit.wtns" \
                "$work/proof-rs.json" "$work/public-rs.json"
        fi
        if [ ! -x "$snarkjs" ]; then
            printf '  %-12s not found at %s\n' snarkjs "$snarkjs"
        elif [ "$k" -gt "$snarkjs_max" ]; then
            printf '  %-12s skipped above 2^%s (--snarkjs-max)\n' snarkjs "$snarkjs_max"
        else
            run snarkjs "$snarkjs" groth16 prove "$d/circuit.zkey" "$d/circuit.wtns" \
                "$work/proof-sj.json" "$work/public-sj.json"
        fi
    done
done
