#!/usr/bin/env bash
# Device run: Montgomery products per second, field.cuh's IMAD product against fp52.cuh's
# FP64-pipe one (bench/cuzk-bench-fp52.cu; both, and the two in one thread), then, where the
# machine has cuobjdump, the SASS opcode counts of one product's kernels (k_imad<2>, k_fp52<1>:
# how many 64-bit adds ptxas made of three-input IADD3s). Build here first:
#   cmake --build build-device --target cuzk-bench-fp52
# then (device tool) run "bash scripts/device/fp52.sh", carry
# ["build-device/bin/cuzk-bench-fp52"] (or the pack, which has it since session 34). BIN
# overrides the binary, ARGS its arguments. Writes
# $OUT/fp52.txt (and $OUT/fp52.sass.txt). ~1 min.
set -u
O=${OUT:-/tmp/fp52-out}
mkdir -p "$O"
B=${BIN:-build-device/bin/cuzk-bench-fp52}
if [ ! -x "$B" ]; then # not carried alone: the pack's (scripts/device-pack)
  . scripts/device/common.sh
  dev_unpack /tmp/czk || { echo "fp52: no $B and no pack" >&2; exit 2; }
  B=$CUZK_BIN_DIR/cuzk-bench-fp52
fi
F=$O/fp52.txt
{
echo "== $(date -u '+%F %T') $(nvidia-smi --query-gpu=name,clocks.max.sm,driver_version \
  --format=csv,noheader 2>/dev/null)"
"$B" ${ARGS:-}
echo "rc=$?"
if command -v cuobjdump >/dev/null; then
  cuobjdump --dump-sass "$B" > "$O/fp52.sass.txt" 2>&1
  python3 - "$O/fp52.sass.txt" <<'PY'
import re, sys, collections
cur, counts = None, collections.OrderedDict()
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m:
        cur = m.group(1); counts[cur] = collections.Counter(); continue
    m = re.search(r'/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', line)
    if cur and m:
        counts[cur][m.group(1).split('.')[0]] += 1
for k, c in counts.items():
    if 'k_imadILi2' in k or 'k_fp52ILi1' in k or 'k_fp52wILi2' in k:
        print(k, sum(c.values()), ' '.join('%s:%d' % kv for kv in c.most_common(14)))
PY
else
  echo "no cuobjdump on this machine"
fi
} > "$F" 2>&1
cat "$F"
