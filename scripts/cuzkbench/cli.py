"""cuzk-bench: measures a cuzk-daemon over gRPC (throughput, latency, stage times, memory).

Runs with Debian's python3-grpcio / python3-protobuf (/usr/bin/python3) and protoc; the gRPC
plumbing is scripts/cuzk-client.py's (imported, not copied). Full guide: docs/BENCH.md.

  cuzk-bench [--addr HOST:PORT [--pid PID] | --unix PATH | --spawn CONFIG.toml] [--json FILE]
             [--report DIR] [--token-file F] [--tls-ca CA.pem [--tls-cert C --tls-key K]]
    single --circuit ID --witness FILE... [--partitions N] [--vk VK.json]
           (every --witness FILE... here and below: or --seeds S1,S2,... for a generated key)
    batch  --circuit ID --witness FILE... -c COUNT -j CONCURRENCY [--partitions N] [--vk VK]
    soak   --circuit ID --witness FILE... -c COUNT [--warmup N] [--max-slope BYTES] [-j 2]
    stress --mix CIRCUIT:PRIORITY:RATE[:PARTITIONS][,...] --witness CIRCUIT=FILE...
           [--duration 30s] [--deadline CLASS=DURATION,...] [--arrivals poisson|fixed]
           [--seed S] [--drain 60s] [--vk CIRCUIT=VK.json] (cuzk-bench stress --help)
    status
  cuzk-bench [--json FILE] [--report DIR] compare A.toml B.toml --circuit ID --witness FILE...
             -c COUNT [-j J] [--partitions N] [--rounds R]
    (spawns a fresh daemon per arm and round, alternating A, B; reports each metric's mean,
    min..max, stdev and the B/A ratio, plus both memory curves)

--witness may be repeated: partition k gets the k-th file (cycling when --partitions is larger;
default one partition per file). --seeds S1,S2,... instead sends witness seeds, for a circuit
whose key the daemon generates (generate_* keys in its [[circuit]]): the daemon makes each
partition's witness itself (its self-verification checks every proof; public values are not
compared then, as there is no file to read them from). --witness-paths sends the files' paths
instead of their bytes (the daemon must be configured with a daemon.witness_dir that holds
them). Every result is checked: one groth16 proof per partition, its public signals equal to
its witness's; --vk also verifies every proof with snarkjs.

--spawn starts <bin>/cuzk-daemon (next to this script, or $CUZK_DAEMON) with CONFIG on
127.0.0.1:0 and stops it with SIGTERM at the end (and if cuzk-bench dies). Memory is sampled
every 100 ms from /proc/<pid>/status (VmRSS, VmHWM) when the daemon's pid is known (--spawn or
--pid), otherwise from GetStatus (sum of the memory owners' in_use plus keys_bytes); GetStatus's
memory by owner alongside; the daemon's GPU memory from nvidia-smi (about 1/s) when present.

Reports: --json FILE (every command); --report DIR writes COMMAND.md, COMMAND.json (without
--json) and SVG plots: memory over time by owner, latency histogram, throughput over time
(batch, soak, stress), RSS against proofs (soak), both configurations' memory curves, latency
and s/proof by round (compare). Progress goes to stderr (in place on a terminal, else a line
every 10 s).

Exit status: 0 ok; 1 a proof or a check failed, soak slope above --max-slope, or the daemon died
during the run ("daemon exited with status N during the run"); 2 usage or connection error.
"""
import argparse
import json
import os
import signal
import sys

import grpc

from .client import Bench, DaemonDied, machine
from .stats import summarize
from .report import print_summary, write_markdown, write_plots
from .workloads import cmd_batch, cmd_single, cmd_soak, cmd_status
from .stress import cmd_stress, parse_duration, STRESS_HELP
from .compare import run_compare


def parse_seeds(text):
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("want comma-separated integers, e.g. 1,2,3")
    if not seeds or any(x < 0 or x >= 1 << 64 for x in seeds):
        raise argparse.ArgumentTypeError("want seeds from 0 to 2^64-1")
    return seeds


def main(argv):
    ap = argparse.ArgumentParser(prog="cuzk-bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--addr", default="127.0.0.1:9820")
    g.add_argument("--spawn", metavar="CONFIG.toml")
    g.add_argument("--unix", metavar="PATH", help="the daemon's unix socket (instead of --addr)")
    ap.add_argument("--token-file", metavar="FILE", help="bearer token (the file holds it alone)")
    ap.add_argument("--tls-ca", metavar="PEM", help="TLS: the CA of the daemon's certificate")
    ap.add_argument("--tls-cert", metavar="PEM", help="mutual TLS: this client's certificate")
    ap.add_argument("--tls-key", metavar="PEM", help="mutual TLS: this client's key")
    ap.add_argument("--tls-name", metavar="NAME", help="name expected in the daemon's certificate")
    ap.add_argument("--pid", type=int, default=0, help="daemon pid for /proc sampling (--addr)")
    ap.add_argument("--daemon-log", metavar="FILE",
                    help="with --spawn: append the daemon's log to FILE as it is written")
    ap.add_argument("--start-timeout", type=float, default=600, metavar="SECONDS",
                    help="--spawn: how long the daemon may take to print its ready line")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--report", metavar="DIR")
    sub = ap.add_subparsers(dest="cmd", required=True)

    def work(p, count=False):
        p.add_argument("--circuit", required=True)
        p.add_argument("--witness", action="append", metavar="FILE.wtns",
                       help="a partition's witness; repeat for distinct partitions")
        p.add_argument("--seeds", type=parse_seeds, metavar="S1,S2,...",
                       help="instead of --witness, for a circuit whose key the daemon "
                       "generates: witness seeds (SubmitProof witness_seeds), one partition "
                       "each; the daemon makes the witnesses, nothing is sent")
        p.add_argument("--partitions", type=int, default=None,
                       help="partitions per proof, cycling through the --witness files "
                       "(default: one per file)")
        p.add_argument("--witness-paths", action="store_true",
                       help="send the witness files' absolute paths (SubmitProof "
                       "witness_paths) instead of their bytes: the daemon reads them itself, "
                       "so they must lie inside its daemon.witness_dir")
        if count:
            p.add_argument("-c", "--count", type=int, required=True)
    p = sub.add_parser("single")
    work(p)
    p.add_argument("--vk", help="also verify with snarkjs against this verification key")
    p = sub.add_parser("batch")
    work(p, True)
    p.add_argument("-j", "--concurrency", type=int, default=1)
    p.add_argument("--vk", help="also verify every proof with snarkjs after the run")
    p = sub.add_parser("soak")
    work(p, True)
    p.add_argument("-j", "--concurrency", type=int, default=2)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--max-slope", type=int, default=64 << 10, help="bytes per proof")
    sub.add_parser("status")
    p = sub.add_parser("stress", description=STRESS_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="open-loop mixed circuits and priorities at given rates")
    p.add_argument("--mix", action="append", required=True,
                   metavar="CIRCUIT:PRIORITY:RATE[:PARTITIONS][,...]")
    p.add_argument("--witness", action="append", required=True, metavar="CIRCUIT=FILE.wtns")
    p.add_argument("--duration", type=parse_duration, default=30.0, metavar="DURATION")
    p.add_argument("--deadline", action="append", metavar="CLASS=DURATION[,...]")
    p.add_argument("--arrivals", choices=("poisson", "fixed"), default="poisson")
    p.add_argument("--seed", default="1")
    p.add_argument("--drain", type=parse_duration, default=60.0, metavar="DURATION")
    p.add_argument("--max-outstanding", type=int, default=1000,
                   help="client-side cap on proofs in flight (arrivals past it: not_sent)")
    p.add_argument("--vk", action="append", metavar="CIRCUIT=VK.json")
    p.add_argument("--fail-on-miss", action="store_true",
                   help="exit 1 when any class has a deadline miss")
    p = sub.add_parser("compare")
    p.add_argument("config_a", metavar="A.toml")
    p.add_argument("config_b", metavar="B.toml")
    work(p, True)
    p.add_argument("-j", "--concurrency", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    if a.cmd in ("single", "batch", "soak", "compare"):
        if bool(a.witness) == bool(a.seeds):
            ap.error("%s: give --witness files or --seeds, one of the two" % a.cmd)
        if a.seeds and a.witness_paths:
            ap.error("--witness-paths goes with --witness files, not --seeds")
    if getattr(a, "partitions", 0) is None:
        a.partitions = len(a.seeds or a.witness)

    mach = machine()
    print("machine: %s, %d cores" % (mach["cpu_model"], mach["cores"]))
    if a.cmd == "compare":
        return run_compare(a, mach)
    try:
        b = Bench(a)
    except (RuntimeError, grpc.FutureTimeoutError, OSError) as e:
        print("cuzk-bench: cannot reach the daemon: %s" % (e or "timeout"), file=sys.stderr)
        return 2
    fn = {"single": cmd_single, "batch": cmd_batch, "soak": cmd_soak, "status": cmd_status,
          "stress": cmd_stress}[a.cmd]
    died = None
    try:
        d, rc = fn(b, a)
    except DaemonDied as e:
        died = e.args[0]
        d = {}
        if len(e.args) > 2 and e.args[1]:
            d = summarize(e.args[1], e.args[2])  # what finished before the death
            print_summary(d)
        d["error"] = "daemon exited with status %s during the run" % died
        rc = 1
    except grpc.RpcError as e:
        d, rc = {"error": "%s: %s" % (e.code().name, e.details())}, 2
        if b.daemon and b.daemon.exited() is not None:
            died = b.daemon.exited()
            d, rc = {"error": "daemon exited with status %s during the run" % died}, 1
    except (ValueError, RuntimeError, OSError) as e:
        d, rc = {"error": str(e)}, 2
    if a.cmd == "stress" and d.get("daemon_died") and died is None:
        died = d.pop("_died")
    stop_rc = b.close()
    if died is not None:
        sig = ""
        if isinstance(died, int) and died < 0:
            sig = " (killed by %s)" % signal.Signals(-died).name
        if died == "unreachable":
            print("cuzk-bench: the daemon at %s stopped answering during the run" % a.addr,
                  file=sys.stderr)
        elif died == "gone":
            print("cuzk-bench: the daemon (pid %d) exited during the run" % a.pid,
                  file=sys.stderr)
        else:
            print("cuzk-bench: daemon exited with status %s%s during the run" % (died, sig),
                  file=sys.stderr)
    elif "error" in d:
        print("cuzk-bench: %s" % d["error"], file=sys.stderr)
    d = dict(d)
    plot_groups = {k: d.pop(k) for k in ("_latency_groups", "_throughput_groups") if k in d}
    d.update({"command": a.cmd, "machine": mach, "exit_status": rc})
    if b.daemon:
        d["daemon"] = {"spawned": True, "config": a.spawn, "exit_status": stop_rc,
                       "died_during_run": died is not None}
    if a.report and a.cmd in ("batch", "soak", "stress"):
        try:
            d["plots"] = write_plots(a.report, a.cmd, dict(d, **plot_groups))
        except (OSError, ValueError, ZeroDivisionError) as e:
            print("cuzk-bench: plots: %s" % e, file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(d, f, indent=1)
    if a.report:
        write_markdown(a.report, a.cmd, d)
        if a.json is None:
            with open(os.path.join(a.report, "%s.json" % a.cmd), "w") as f:
                json.dump(d, f, indent=1)
    return rc
