#!/usr/bin/env bash
# Times `cuzk gen-circuit` and `cuzk setup` (wall clock, user+sys CPU, peak RSS) at 2^16 and
# 2^20 constraints on BN254 and BLS12-381, and records the machine load, since on a shared
# machine the wall time depends on it.
#   bench/setup-bench.sh [BIN_DIR] [SIZES...]     (default sizes: 16 20; profile sparse-bits)
# Environment: PROFILE (dense | sparse-bits | mixed), THREADS (default: all cores), KEEP=1 to
# keep the files (in $TMPDIR/cuzk-setup-bench).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/bin}
shift || true
SIZES=${*:-16 20}
PROFILE=${PROFILE:-sparse-bits}
CUZK=$BIN/cuzk
W=${TMPDIR:-/tmp}/cuzk-setup-bench
mkdir -p "$W"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$W"' EXIT
[ -x "$CUZK" ] || { echo "setup-bench: $CUZK missing" >&2; exit 1; }
thr=()
[ -n "${THREADS:-}" ] && thr=(--threads "$THREADS")

# run LABEL cmd...: one line "LABEL wall user sys maxrss load-before load-after"
run() {
  local label=$1; shift
  local l0; l0=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%e %U %S %M" -o "$W/time" "$@" >"$W/out" 2>"$W/err" || {
    echo "setup-bench: $label failed:" >&2; cat "$W/err" >&2; return 1; }
  local l1; l1=$(cut -d' ' -f1 /proc/loadavg)
  read -r wall user sys rss < "$W/time"
  printf '%-34s wall %7.2fs  cpu %7.2fs  (user %.2f sys %.2f)  maxrss %6d MiB  load %s -> %s\n' \
    "$label" "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" $((rss / 1024)) "$l0" "$l1"
}

echo "# cuzk setup bench: $(nproc) cores, $(date -u +%FT%TZ), profile $PROFILE, threads ${THREADS:-all}"
echo "# uptime: $(uptime)"
for k in $SIZES; do
  for curve in bn128 bls12381; do
    d=$W/$curve-$k
    run "gen-circuit 2^$k $curve" "$CUZK" gen-circuit --quiet --constraints "2^$k" --curve "$curve" --profile "$PROFILE" --seed bench -o "$d"
    run "setup 2^$k $curve" "$CUZK" setup --quiet "${thr[@]}" --seed 00 "$d/circuit.r1cs" "$d/k.zkey"
    n8q=48; [ "$curve" = bn128 ] && n8q=32
    echo "    zkey $(( $(stat -c %s "$d/k.zkey") >> 20 )) MiB, domain $(od -An -tu4 -j$(( 12 + 12 + 4 + 12 + 4 + n8q + 4 + 32 + 8 )) -N4 "$d/k.zkey" | tr -d ' ')"
    rm -f "$d/k.zkey"
  done
done
