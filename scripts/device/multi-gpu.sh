#!/usr/bin/env bash
# Daemon throughput on several GPUs: seconds per proof at 1, 2, 4 and 8 GPUs (gpus.devices) for
# three workloads, each with a test key generated in the daemon's memory and witnesses from
# seeds (no files, no witness bytes over gRPC; as scripts/porep-bench --generated):
#   dense-bn    bn128 dense, 2^LOG domain, 1 partition per proof
#   dense-bls   bls12381 dense, 2^LOG domain, 1 partition per proof
#   porep       bls12381 sparse-bits, 2^LOG domain, 10 partitions per proof (porep-bench's)
# then, at the most GPUs, B in G2 on the GPU beside each worker against a device of its own
# (gpus.g2_device = the last one), and a fault run: device 1 faults on every stage
# (gpus.emulated_faulty_devices), its stages are retried on the others and it is disabled.
# Each run: a fresh daemon (gw 2, pw 2 per GPU), COUNT_PER_GPU x GPUs proofs (porep: at least
# 2) with 2 per GPU in flight (porep: 2), every proof self-verified by the daemon; one table row
# with s/proof, p50 latency and, per device, G1 stages / B in G2 stages (from GetStatus), faults
# and disabled devices. The key is generated at every daemon start (not in s/proof).
#   bash scripts/device/multi-gpu.sh [options]      (see common.sh: the pack, $OUT)
#     --log N            domain 2^N (default 24; 10 with --emulated)
#     --gpus "1 2 4 8"   GPU counts (those above the machine's count are skipped)
#     --workloads "dense-bn dense-bls porep"
#     --runs "scale g2 fault"   which parts to run (scale: every GPU count, B in G2 where
#                        gpus.g2 = "auto" puts it)
#     --count-per-gpu N  proofs per GPU per run (default 4)
#     --emulated         no GPU: gpus.emulated_devices = N instead of gpus.devices, the build's
#                        binaries (build/bin, or $CUZK_BIN_DIR), no pack; checks the script and
#                        the daemon's placement at a tiny size on the CPU
#     --dry-run          print each run's config and command, run nothing
# Runs that fit one call: --workloads and --runs split the matrix (each daemon start generates
# its key: about a minute at 2^24).
set -u
LOG="" GPUS="1 2 4 8" WORKLOADS="dense-bn dense-bls porep" RUNS="scale g2 fault" PER_GPU=4
EMULATED=0 DRY=0
die() { echo "multi-gpu: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --log) LOG=$2; shift 2 ;;
    --gpus) GPUS=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --count-per-gpu) PER_GPU=$2; shift 2 ;;
    --emulated) EMULATED=1; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (--help lists the options)" ;;
  esac
done
[ -n "$LOG" ] || LOG=$([ "$EMULATED" = 1 ] && echo 10 || echo 24)
case "$LOG" in ''|*[!0-9]*) die "--log wants a number" ;; esac
[ "$LOG" -ge 8 ] && [ "$LOG" -le 27 ] || die "--log $LOG: want 8..27"
case "$PER_GPU" in ''|*[!0-9]*|0) die "--count-per-gpu wants a positive number" ;; esac
for g in $GPUS; do case "$g" in ''|*[!0-9]*|0) die "--gpus: positive numbers" ;; esac; done
for w in $WORKLOADS; do
  case "$w" in dense-bn|dense-bls|porep) ;; *) die "--workloads: dense-bn, dense-bls, porep" ;; esac
done
for r in $RUNS; do case "$r" in scale|g2|fault) ;; *) die "--runs: scale, g2, fault" ;; esac; done

O=${OUT:-/tmp/multi-gpu-out}
mkdir -p "$O" || die "cannot create $O"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$EMULATED" = 1 ]; then
  NGPU=8
  BIN=${CUZK_BIN_DIR:-$SRC/build/bin}
  echo "== multi-gpu, emulated devices (no GPU): $(nproc) cpus; $(date -u '+%F %T') UTC"
elif [ "$DRY" = 1 ]; then
  NGPU=8
  BIN=${CUZK_BIN_DIR:-/tmp/cz/bin}
else
  . "$SRC/scripts/device/common.sh"
  dev_unpack /tmp/cz || die "cannot unpack the pack"
  dev_header
  BIN=$CUZK_BIN_DIR
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ "$NGPU" -ge 1 ] || die "no GPU found by nvidia-smi"
fi
PY=${CUZK_PYTHON:-/usr/bin/python3}
BENCH=$SRC/scripts/cuzk-bench
if [ "$DRY" = 0 ]; then
  [ -x "$BIN/cuzk-daemon" ] || die "$BIN/cuzk-daemon not found"
  "$PY" -c 'import grpc, google.protobuf' 2>/dev/null \
    || die "cuzk-bench needs python3-grpcio and python3-protobuf for $PY"
fi
MAXG=0
for g in $GPUS; do [ "$g" -le "$NGPU" ] && [ "$g" -gt "$MAXG" ] && MAXG=$g; done
[ "$MAXG" -ge 1 ] || die "--gpus: none of '$GPUS' fits the $NGPU GPUs here"
n=$(( (1 << LOG) - (1 << (LOG - 6)) ))
PORT=${PORT:-19820}
echo "multi-gpu: 2^$LOG domains ($n constraints), GPUs '$GPUS' (of $NGPU), workloads" \
     "'$WORKLOADS', runs '$RUNS', $PER_GPU proofs per GPU; out $O"

# one run: NAME WORKLOAD GPUS EXTRA_GPUS_TOML
run() {
  local name=$1 w=$2 g=$3 extra=$4 curve profile parts devs cfg count j t0 rc
  case "$w" in
    dense-bn) curve=bn128 profile=dense parts=1 ;;
    dense-bls) curve=bls12381 profile=dense parts=1 ;;
    porep) curve=bls12381 profile=sparse-bits parts=10 ;;
  esac
  if [ "$w" = porep ]; then
    j=2 count=$(( g > 2 ? g : 2 ))
  else
    j=$(( 2 * g )) count=$(( PER_GPU * g ))
  fi
  if [ "$EMULATED" = 1 ]; then
    devs="emulated_devices = $g"
  else
    devs="devices = [$(seq -s, 0 $(( g - 1 )))]"
  fi
  cfg=$O/$name.toml
  cat > "$cfg" <<TOML
# multi-gpu run $name: $w on $g GPU(s)
[daemon]
max_message_size = "2047MiB"
[metrics]
listen = ""
[gpus]
$devs
workers_per_device = 2
$extra
[synthesis]
partition_workers = $(( 2 * g ))
[scheduler]
max_jobs_in_flight = $j
[prover]
verify = true
[logging]
level = "warn"
[[circuit]]
id = "w"
generate_curve = "$curve"
generate_profile = "$profile"
generate_constraints = $n
generate_seed = "1"
preload = true
TOML
  local seeds
  seeds=$(seq -s, 1 "$parts")
  local cmd=("$PY" "$BENCH" --addr "127.0.0.1:$PORT" --json "$O/$name.json")
  local work=(batch --circuit w --seeds "$seeds" -c "$count" -j "$j")
  if [ "$DRY" = 1 ]; then
    echo "--- $name: $BIN/cuzk-daemon --config $cfg --listen 127.0.0.1:$PORT; then" \
         "${cmd[*]} ${work[*]}"
    sed 's/^/    /' "$cfg"
    return 0
  fi
  t0=$(date +%s)
  "$BIN/cuzk-daemon" --config "$cfg" --listen "127.0.0.1:$PORT" > "$O/$name.log" 2>&1 &
  local pid=$!
  until grep -q "ready, serving on" "$O/$name.log" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$name: the daemon exited at start: $(tail -3 "$O/$name.log")"; return 1
    fi
    sleep 1
  done
  local ready=$(( $(date +%s) - t0 ))
  "${cmd[@]}" --pid "$pid" "${work[@]}" > "$O/$name.out" 2> "$O/$name.err"
  rc=$?
  "$PY" "$BENCH" --addr "127.0.0.1:$PORT" --json "$O/$name.status.json" status > /dev/null 2>&1
  kill -TERM "$pid"
  wait "$pid"
  "$PY" - "$O/$name.json" "$O/$name.status.json" "$name" "$ready" "$rc" <<'PY'
import json, sys
bj, sj, name, ready, rc = sys.argv[1:6]
try:
    b = json.load(open(bj))
except (OSError, ValueError):
    b = {}
try:
    st = json.load(open(sj))["status"]
except (OSError, ValueError, KeyError):
    st = {}
gpus = st.get("gpus", [])
per = " ".join("%s%s:%s/%s%s" % ("*" if g.get("g2_only") else "", g.get("device", 0),
                                 g.get("partitions", 0), g.get("g2_partitions", 0),
                                 "(off)" if g.get("disabled") else "") for g in gpus)
sp = b.get("s_per_proof")
lat = b.get("latency_s", {}).get("p50")
print("| %-22s | %8s | %8s | %5d | %6s | %6s | %s | %ss |" % (
    name, "%.3f" % sp if sp is not None else "-", "%.3f" % lat if lat is not None else "-",
    b.get("failed", -1) if rc == "0" else -1, st.get("gpu_faults", "0"),
    st.get("cpu_fallbacks", "0"), per or "-", ready))
PY
  [ "$rc" = 0 ] || echo "  $name: cuzk-bench exit $rc: $(tail -2 "$O/$name.err")"
}

echo "| run | s/proof | p50 s | failed | faults | cpu fallbacks | device:G1/G2 stages (*: B in G2 alone) | ready |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for w in $WORKLOADS; do
  if [[ " $RUNS " == *" scale "* ]]; then
    for g in $GPUS; do
      [ "$g" -le "$NGPU" ] || { echo "  skip $w at $g GPUs: $NGPU here"; continue; }
      run "$w-${g}gpu" "$w" "$g" ""
    done
  fi
  if [[ " $RUNS " == *" g2 "* ]]; then
    if [ "$MAXG" -ge 2 ]; then
      run "$w-${MAXG}gpu-g2beside" "$w" "$MAXG" 'g2 = "gpu"'
      run "$w-${MAXG}gpu-g2own" "$w" "$MAXG" "g2 = \"gpu\"
g2_device = $(( MAXG - 1 ))"
    else
      echo "  skip the B in G2 runs of $w: they need 2 GPUs"
    fi
  fi
  if [[ " $RUNS " == *" fault "* ]]; then
    if [ "$MAXG" -ge 2 ]; then
      run "$w-${MAXG}gpu-fault1" "$w" "$MAXG" "emulated_faulty_devices = [1]"
    else
      echo "  skip the fault run of $w: it needs 2 GPUs"
    fi
  fi
done
echo "== end $(date -u '+%T')"
