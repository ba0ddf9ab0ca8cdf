#!/usr/bin/env bash
# Device run 2: full proofs at 2^24 dense (both curves, GPU, G2 on GPU); PoRep-shaped bench
# Run on the GPU machine from the repository root, after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/THIS.sh", carry ["build-device"]).
# with witnesses by path; key load from zkey vs cache.
set -u
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus"
B=$CUZK_BIN_DIR
n=$(( (1 << 24) - (1 << 18) ))
for curve in bn128 bls12381; do
  d=/tmp/e2e/$curve; mkdir -p $d; t0=$(date +%s)
  timeout 100 $B/cuzk gen-circuit --constraints $n --curve $curve --profile dense --seed 1 -o $d > /dev/null 2>&1 || echo "gen-circuit $curve failed"
  t1=$(date +%s)
  timeout 200 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "setup $curve failed"
  t2=$(date +%s); echo "$curve 2^24 dense: gen-circuit $((t1-t0)) s, setup $((t2-t1)) s, key $(du -h $d/circuit.zkey | cut -f1)"
  for i in 1 2; do timeout 120 $B/cuzk prove --backend gpu --g2 gpu $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json 2>&1 | tail -1; done
  cp $d/p.json $OUT/e2e-$curve-proof.json; cp $d/pub.json $OUT/e2e-$curve-public.json; $B/cuzk export-vk $d/circuit.zkey $OUT/e2e-$curve-vk.json
  rm -rf $d
done
t0=$(date +%s)
timeout 260 scripts/porep-bench --log 22 --paths --bin $B --out /tmp/porep --count 3 --rounds 1 \
  --grid "2:4:2 2:2:2 2:8:2" > $OUT/porep.log 2>&1; echo "porep rc=$? ($(( $(date +%s) - t0 )) s)"
grep -v "^  machine" $OUT/porep.log | tail -26
C=/tmp/porep/circuit
printf '[metrics]\nlisten = ""\n[logging]\nlevel = "info"\n[[circuit]]\nid = "porep"\nzkey = "%s/circuit.zkey"\npreload = true\n' $C > /tmp/kl.toml
for run in zkey cache; do
  [ $run = zkey ] && rm -f $C/circuit.zkey.cuzkcache
  $B/cuzk-daemon --config /tmp/kl.toml --listen 127.0.0.1:0 > /tmp/kl-$run.log 2>&1 &
  p=$!
  for i in $(seq 900); do grep -q "ready, serving" /tmp/kl-$run.log && break; sleep 0.1; done
  kill -TERM $p; wait $p
  grep -h "proving key loaded\|key cache written\|staged on the GPU" /tmp/kl-$run.log | sed "s/^/[$run] /" | cut -c1-220
done
tar -czf $OUT/porep2.tgz --exclude=circuit -C /tmp porep
