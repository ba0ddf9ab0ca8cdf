#!/usr/bin/env bash
# Cluster throughput and overhead (docs/PERFORMANCE.md, "Cluster"). Starts a throwaway
# PostgreSQL (tests/cluster/pg.sh) and, in each round, three arms in turn on the same cores:
#   plain     one cuzk-daemon without [cluster]           (pw = CORES, CUZK_THREADS = CORES)
#   cluster1  one node with [cluster]                      (same engine settings)
#   cluster2  two nodes sharing the queue, a share each    (pw = CORES/2, CUZK_THREADS = CORES/2)
# Each arm gets a fresh database; cuzk-bench batch submits multi-partition jobs to node 1 only
# (cluster2: node 2 claims partitions from the queue). Prints the medians over the rounds.
#
#   bench/cluster-bench.sh [-r ROUNDS] [-c JOBS] [-j IN_FLIGHT] [-p PARTITIONS]
#                          [-k CIRCUIT] [-w FILE.wtns] [-o OUTDIR]
# Defaults: 3 rounds, 12 jobs, 4 in flight, 4 partitions, bn128-poseidon. Needs PostgreSQL
# (initdb, pg_ctl) and a daemon built with libpq. The trap stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CUZK_BIN_DIR:-build/bin}
ROUNDS=3 COUNT=12 J=4 PARTS=4 CIRCUIT=bn128-poseidon WTNS="" OUT=""
while getopts "r:c:j:p:k:w:o:" o; do
  case $o in
    r) ROUNDS=$OPTARG ;; c) COUNT=$OPTARG ;; j) J=$OPTARG ;; p) PARTS=$OPTARG ;;
    k) CIRCUIT=$OPTARG ;; w) WTNS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) sed -n 2,13p "$0" >&2; exit 2 ;;
  esac
done
[ -n "$WTNS" ] || WTNS=tests/fixtures/bn128/${CIRCUIT#bn128-}.wtns
[ -x "$BIN/cuzk-daemon" ] || { echo "cluster-bench: build first (make)" >&2; exit 1; }
source tests/cluster/pg.sh
[ -x "$PG_BINDIR/initdb" ] || { echo "cluster-bench: needs postgresql (scripts/install-deps)" >&2; exit 1; }
CORES=$(nproc)
HALF=$(( CORES / 2 > 0 ? CORES / 2 : 1 ))
DIR=$(mktemp -d /tmp/cuzk-cluster-bench.XXXXXX)
chmod 755 "$DIR"
OUT=${OUT:-$DIR/out}
mkdir -p "$OUT"
pids=()
stop_nodes() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
stop_all() {
  trap - EXIT INT TERM
  stop_nodes
  pg_stop
  rm -rf "$DIR/pg"
}
trap stop_all EXIT INT TERM
pg_start "$DIR/pg"

# node N THREADS PW [DB]: starts a daemon on 127.0.0.1:1985N, [cluster] on database DB if given.
node() {
  local n=$1 threads=$2 pw=$3 db=${4:-} cfg=$DIR/node$1.toml
  sed -e 's#"\.\./tests/fixtures#"'"$PWD"'/tests/fixtures#' \
      -e "s/^partition_workers = .*/partition_workers = $pw/" configs/bench.toml >"$cfg"
  cat >>"$cfg" <<CONF

[[circuit]]
id = "bn128-chain"
zkey = "$PWD/tests/fixtures/bn128/chain.zkey"
preload = true
CONF
  if [ -n "$db" ]; then
    printf '\n[cluster]\ndatabase = "host=%s dbname=%s user=cuzk"\nnode_id = "node%s"\n' \
      "$PG_DIR" "$db" "$n" >>"$cfg"
  fi
  CUZK_THREADS=$threads "$BIN/cuzk-daemon" --config "$cfg" --listen 127.0.0.1:1985$n \
    2>"$DIR/node$n.log" &
  pids+=($!)
  for _ in $(seq 600); do
    grep -q "cuzk-daemon ready" "$DIR/node$n.log" && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  cat "$DIR/node$n.log" >&2
  echo "cluster-bench: node $n did not start" >&2
  return 1
}

# arm NAME ROUND: one measurement into $OUT/NAME-ROUND.json.
arm() {
  local name=$1 r=$2 db=""
  case $name in
    plain) node 1 "$CORES" "$CORES" ;;
    cluster1) db=b_${name}_$r; pg_as "$PG_BINDIR/createdb" -h "$PG_DIR" -U cuzk "$db"
              node 1 "$CORES" "$CORES" "$db" ;;
    cluster2) db=b_${name}_$r; pg_as "$PG_BINDIR/createdb" -h "$PG_DIR" -U cuzk "$db"
              node 1 "$HALF" "$HALF" "$db"; node 2 "$HALF" "$HALF" "$db" ;;
  esac
  /usr/bin/python3 scripts/cuzk-bench --addr 127.0.0.1:19851 --pid "${pids[0]}" \
    --json "$OUT/$name-$r.json" batch --circuit "$CIRCUIT" --witness "$WTNS" \
    --partitions "$PARTS" -c "$COUNT" -j "$J" >"$DIR/$name-$r.log" 2>&1 ||
    { cat "$DIR/$name-$r.log" >&2; return 1; }
  if [ -n "$db" ]; then # partitions proved per node
    echo "cluster-bench: $name round $r: partitions proved by" $(pg_as "$PG_BINDIR/psql" \
      -h "$PG_DIR" -U cuzk -d "$db" -AtF= -c \
      "SELECT node_id, count(*) FROM cuzk_results GROUP BY node_id ORDER BY node_id") >&2
  fi
  stop_nodes
}

echo "cluster-bench: $CORES cores, $CIRCUIT, $COUNT jobs x $PARTS partitions, j=$J," \
     "$ROUNDS rounds; results in $OUT" >&2
for r in $(seq "$ROUNDS"); do
  # The arms' order rotates each round, so a slow spell of a shared machine hits each arm.
  arms=(plain cluster1 cluster2)
  k=$(( (r - 1) % 3 ))
  for a in "${arms[@]:k}" "${arms[@]:0:k}"; do
    echo "cluster-bench: round $r: $a" >&2
    arm "$a" "$r"
  done
done
/usr/bin/python3 - "$OUT" "$ROUNDS" "$PARTS" <<'PY'
import json, statistics, sys
out, rounds, parts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = {}
for a in ("plain", "cluster1", "cluster2"):
    rs = [json.load(open("%s/%s-%d.json" % (out, a, r))) for r in range(1, rounds + 1)]
    bad = sum(x["failed"] for x in rs)
    if bad:
        sys.exit("cluster-bench: %d proofs failed in arm %s" % (bad, a))
    rows[a] = {"s_per_job": statistics.median(x["s_per_proof"] for x in rs),
               "p50": statistics.median(x["latency_s"]["p50"] for x in rs),
               "runs": [x["s_per_proof"] for x in rs]}
base = rows["plain"]["s_per_job"]
print("| arm | s/job (median) | partitions/s | vs plain | p50 latency s | s/job per round |")
print("| --- | --- | --- | --- | --- | --- |")
for a, v in rows.items():
    print("| %s | %.3f | %.2f | %.2fx | %.3f | %s |" % (
        a, v["s_per_job"], parts / v["s_per_job"], base / v["s_per_job"], v["p50"],
        " ".join("%.3f" % x for x in v["runs"])))
PY
