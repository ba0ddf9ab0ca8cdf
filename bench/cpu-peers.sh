#!/usr/bin/env bash
# CPU provers side by side: cuzk (CPU backend), rapidsnark and snarkjs on the same generated
# circuits, whole-process wall time and peak RSS (/usr/bin/time), median of RUNS runs; the
# provers take turns run by run. "cuzk cache" loads a key cache written before the runs.
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

# once NAME CMD...: one run, its wall time and peak RSS appended to $work/NAME.runs
# (a failure is remembered in $work/NAME.fail and later runs of NAME are skipped)
once() {
    local name=$1; shift
    local f=$work/${name// /_}
    [ -e "$f.fail" ] && return
    if ! /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >"$work/out.txt" 2>&1; then
        tail -1 "$work/out.txt" >"$f.fail"
        return
    fi
    cat "$work/time.txt" >>"$f.runs"
}
# report NAME: "NAME  wall_s  peak_MiB" (medians) or the failure
report() {
    local name=$1 f=$work/${1// /_}
    if [ -e "$f.fail" ]; then
        printf '  %-12s failed: %s\n' "$name" "$(cat "$f.fail")"
    else
        printf '  %-12s %8.2f s %8.0f MiB\n' "$name" "$(cut -d' ' -f1 "$f.runs" | median)" \
            "$(cut -d' ' -f2 "$f.runs" | median | awk '{print $1 / 1024}')"
    fi
    rm -f "$f.runs" "$f.fail"
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
        # the key cache is written once before the timed runs, which load it
        "$cuzk" prove --backend cpu --quiet --key-cache auto "$d/circuit.zkey" "$d/circuit.wtns" \
            "$work/proof.json" "$work/public.json"
        names=(cuzk "cuzk cache")
        if [ -n "$rapidsnark" ] && [ "$curve" = bn128 ]; then names+=(rapidsnark); fi
        if [ -x "$snarkjs" ] && [ "$k" -le "$snarkjs_max" ]; then names+=(snarkjs); fi
        # the provers take turns, so a change in the machine's load falls on all of them
        for ((i = 0; i < runs; i++)); do
            once cuzk "$cuzk" prove --backend cpu --quiet "$d/circuit.zkey" "$d/circuit.wtns" \
                "$work/proof.json" "$work/public.json"
            once "cuzk cache" "$cuzk" prove --backend cpu --quiet --key-cache auto \
                "$d/circuit.zkey" "$d/circuit.wtns" "$work/proof.json" "$work/public.json"
            if [[ " ${names[*]} " == *" rapidsnark "* ]]; then
                once rapidsnark "$rapidsnark" "$d/circuit.zkey" "$d/circuit.wtns" \
                    "$work/proof-rs.json" "$work/public-rs.json"
            fi
            if [[ " ${names[*]} " == *" snarkjs "* ]]; then
                once snarkjs "$snarkjs" groth16 prove "$d/circuit.zkey" "$d/circuit.wtns" \
                    "$work/proof-sj.json" "$work/public-sj.json"
            fi
        done
        for n in "${names[@]}"; do report "$n"; done
        if [ -z "$rapidsnark" ]; then
            printf '  %-12s not given (--rapidsnark PATH)\n' rapidsnark
        elif [ "$curve" != bn128 ]; then
            printf '  %-12s BN254 only\n' rapidsnark
        fi
        if [ ! -x "$snarkjs" ]; then
            printf '  %-12s not found at %s\n' snarkjs "$snarkjs"
        elif [ "$k" -gt "$snarkjs_max" ]; then
            printf '  %-12s skipped above 2^%s (--snarkjs-max)\n' snarkjs "$snarkjs_max"
        fi
    done
done
