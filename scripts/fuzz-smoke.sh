#!/usr/bin/env bash
# fuzz-smoke.sh — build the libFuzzer targets fuzz/fuzz_<target>.c with clang
# -fsanitize=fuzzer,address,undefined and run each for a short time over its seed corpus
# fuzz/corpus/<target>/. Targets: zkey, wtns, r1cs (the file readers, src/io), point (the point
# decoders of src/ec/encode.c: snarkjs binary and JSON, ZCash), toml (the config parser and
# the size / duration strings), json (the JSON reader and writer), inputs (circuit inputs,
# src/witness/inputs.c) and auth (the daemon's tokens file and TLS PEM checks, src/rpc/auth.c).
# New inputs go to a scratch directory, never into the committed corpus; crashes are written to
# the build directory and make the script fail.
# Usage: scripts/fuzz-smoke.sh [BUILD_DIR]      (default build-fuzz)
# Env:   FUZZ_TIME=20 (seconds per target; FUZZ_SECONDS is read too)  CC=clang
#        FUZZ_TARGETS="zkey wtns r1cs point toml json inputs auth"
#        FUZZ_SEED_REFRESH=1 first re-makes the seed corpora of zkey, wtns, r1cs (copies of the
#        small snarkjs fixtures in tests/fixtures) and point (fuzz/point-seeds.py).
#        FUZZ_MERGE=1 afterwards merges inputs that add coverage into fuzz/corpus/<target>/ (this
#        is how the committed regression corpus was grown; review before committing).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/build-fuzz}" && cd "${1:-$ROOT/build-fuzz}" && pwd)
CC=${CC:-clang}
FUZZ_TIME=${FUZZ_TIME:-${FUZZ_SECONDS:-20}}
TARGETS=${FUZZ_TARGETS:-"zkey wtns r1cs point toml json inputs auth"}
command -v "$CC" >/dev/null || { echo "fuzz-smoke: $CC not found" >&2; exit 2; }

if [ "${FUZZ_SEED_REFRESH:-0}" = 1 ]; then
    for c in bn128 bls12381; do
        for k in zkey wtns r1cs; do
            cp "$ROOT/tests/fixtures/$c/multiplier.$k" "$ROOT/fuzz/corpus/$k/${c}_multiplier.$k"
        done
        cp "$ROOT/tests/fixtures/$c/poseidon.wtns" "$ROOT/fuzz/corpus/wtns/${c}_poseidon.wtns"
    done
    python3 "$ROOT/fuzz/point-seeds.py"
fi

FLAGS=(-std=gnu11 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-function
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -I"$ROOT/include" -I"$ROOT/src")
fail=0
for k in $TARGETS; do
    OPT=-O1
    case $k in
    # The readers need src/io, the error table (src/util/err.c) and the fork-join loop
    # (src/util/parallel.c: cuzk_wtns_validate checks values on all cores).
    zkey | wtns | r1cs)
        SRCS=("$ROOT"/src/io/*.c "$ROOT/src/util/err.c" "$ROOT/src/util/parallel.c") ;;
    # The field's add / sub assembly (src/ff/ff_tmpl.h, used when __OPTIMIZE__) needs more
    # registers than clang finds under ASan; at -O0 the C forms are compiled instead.
    point)
        SRCS=("$ROOT/src/ec/encode.c" "$ROOT/src/ec/subgroup.c" "$ROOT/src/ff/ff.c"
              "$ROOT/src/ff/fp2_sqrt.c" "$ROOT/src/util/err.c")
        OPT=-O0 ;;
    toml) SRCS=("$ROOT/src/util/toml.c" "$ROOT/src/util/units.c" "$ROOT/src/util/alloc.c" "$ROOT/src/util/err.c") ;;
    json) SRCS=("$ROOT/src/util/json.c" "$ROOT/src/util/err.c") ;;
    inputs) SRCS=("$ROOT/src/witness/inputs.c" "$ROOT/src/util/json.c" "$ROOT/src/util/err.c") ;;
    auth) SRCS=("$ROOT/src/rpc/auth.c" "$ROOT/src/util/sha256.c" "$ROOT/src/util/err.c") ;;
    *) echo "fuzz-smoke: unknown target '$k' (zkey wtns r1cs point toml json inputs auth)" >&2
       exit 2 ;;
    esac
    bin=$OUT/fuzz_$k
    echo "== build fuzz_$k" >&2
    "$CC" "${FLAGS[@]}" $OPT "$ROOT/fuzz/fuzz_$k.c" "${SRCS[@]}" -o "$bin"
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-fuzz-$k.XXXXXX")
    echo "== run fuzz_$k for ${FUZZ_TIME}s ($(ls "$ROOT/fuzz/corpus/$k" | wc -l) seeds)" >&2
    if ! (cd "$OUT" && "$bin" -max_total_time="$FUZZ_TIME" -timeout=10 -rss_limit_mb=2048 \
            -max_len=65536 -print_final_stats=1 -artifact_prefix="$OUT/crash-$k-" \
            "$scratch" "$ROOT/fuzz/corpus/$k" 2>"$OUT/fuzz_$k.log"); then
        echo "fuzz_$k FAILED; see $OUT/fuzz_$k.log and $OUT/crash-$k-*" >&2
        tail -40 "$OUT/fuzz_$k.log" >&2
        fail=1
    else
        grep -E "stat::number_of_executed_runs|cov:" "$OUT/fuzz_$k.log" | tail -2 >&2
        if [ "${FUZZ_MERGE:-0}" = 1 ]; then
            (cd "$OUT" && "$bin" -merge=1 -max_len=65536 "$ROOT/fuzz/corpus/$k" "$scratch" \
                2>>"$OUT/fuzz_$k.log")
            echo "   corpus now $(ls "$ROOT/fuzz/corpus/$k" | wc -l) files" >&2
        fi
    fi
    rm -rf "$scratch"
done
exit $fail
