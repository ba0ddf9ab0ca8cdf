#!/usr/bin/python3
"""Cluster tests: cuzk-daemon nodes on one PostgreSQL (started by cluster_test.sh; PG_CONNINFO,
PG_DIR, TMP in the environment), driven over loopback gRPC. Proofs are self-verified by the
daemons and some are checked with snarkjs."""
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.abspath(sys.argv[1])
SNARKJS = os.path.join(ROOT, "node_modules/.bin/snarkjs")
FIX = os.path.join(ROOT, "tests/fixtures")
TMP = os.environ["TMP"]
CONNINFO = os.environ["PG_CONNINFO"]

spec = importlib.util.spec_from_file_location("cuzk_client", os.path.join(ROOT, "scripts/cuzk-client.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)
pb = cc.pb()
COMPLETED = pb.JobState.Value("JOB_STATE_COMPLETED")
CANCELLED = pb.JobState.Value("JOB_STATE_CANCELLED")

checks = 0
failures = 0


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: %s" % what, file=sys.stderr, flush=True)
    return cond


def read(rel):
    with open(os.path.join(FIX, rel), "rb") as f:
        return f.read()


POS = read("bn128/poseidon.wtns")
BLS_POS = read("bls12381/poseidon.wtns")
CHAIN = read("bn128/chain.wtns")


def sql(q):
    r = subprocess.run(["psql", CONNINFO, "-Atqc", q], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("psql: %s" % r.stderr)
    return r.stdout.strip()


def pg(action):
    subprocess.run(["bash", "-c", "source tests/cluster/pg.sh && pg_%s" % action], cwd=ROOT,
                   check=True)


def write_config(name, lease="2s", slots=1, db=CONNINFO, extra=""):
    path = os.path.join(TMP, "%s.toml" % name)
    with open(path, "w") as f:
        f.write("""
[metrics]
listen = ""
[keys]
cache = false
[synthesis]
partition_workers = 1
[gpus]
host_threads = 1
[cluster]
database = "%(db)s"
node_id = "%(name)s"
lease = "%(lease)s"
poll_interval = "300ms"
slots = %(slots)d
%(extra)s
[[circuit]]
id = "bn-pos"
zkey = "%(f)s/bn128/poseidon.zkey"
preload = true
[[circuit]]
id = "bls-pos"
zkey = "%(f)s/bls12381/poseidon.zkey"
preload = true
[[circuit]]
id = "bn-chain"
zkey = "%(f)s/bn128/chain.zkey"
preload = true
""" % {"db": db, "name": name, "lease": lease, "slots": slots, "f": FIX, "extra": extra})
    return path


class Node:
    def __init__(self, name, lease="2s", slots=1, extra=""):
        self.name = name
        self.path = write_config(name, lease, slots, extra=extra)
        self.lines = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen([DAEMON, "--config", self.path, "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        with open(os.path.join(TMP, "pids"), "a") as f:
            f.write("%d\n" % self.proc.pid)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.ready.wait(60):
            raise RuntimeError("%s: no ready line:\n%s" % (name, "".join(self.lines)))
        self.addr = re.search(r"serving on (\S+)$", self.ready_line).group(1)
        self.client = cc.Client(self.addr)
        self.client.wait_ready(30)

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            if "cuzk-daemon ready, serving on " in line:
                self.ready_line = line.rstrip()
                self.ready.set()

    def call(self, method, **kw):
        return self.client.call(method, timeout=120, **kw)

    def log(self, needle):
        return [l for l in list(self.lines) if needle in l]

    def stop(self):
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(60)
        self.reader.join(5)
        return rc

    def kill9(self):
        self.client.close()
        self.proc.kill()
        self.proc.wait(10)
        self.reader.join(5)


def snarkjs_verify(vk, p, tag):
    d = tempfile.mkdtemp(dir=TMP)
    pf, uf = os.path.join(d, "proof.json"), os.path.join(d, "public.json")
    with open(pf, "w") as f:
        f.write(p.proof_json)
    with open(uf, "w") as f:
        f.write(p.public_json)
    r = subprocess.run([SNARKJS, "groth16", "verify", os.path.join(FIX, vk), uf, pf],
                       capture_output=True, text=True)
    return check(r.returncode == 0 and "OK" in r.stdout, "snarkjs verifies %s: %s %s" %
                 (tag, r.stdout[-300:], r.stderr[-300:]))


def expect_error(fn, code, needle, what):
    try:
        fn()
    except grpc.RpcError as e:
        return check(e.code() == code and needle in (e.details() or ""),
                     "%s: got %s %r" % (what, e.code(), e.details()))
    return check(False, "%s: no error" % what)


def wait_for(pred, timeout, what):
    t = time.time() + timeout
    while time.time() < t:
        if pred():
            return True
        time.sleep(0.05)
    return check(False, "timed out waiting for %s" % what)


def proved_by(job):
    return sql("SELECT node_id, count(*) FROM cuzk_results WHERE job_id = '%s' GROUP BY node_id "
               "ORDER BY node_id" % job)


def test_database_down_at_start():
    path = write_config("down", db="host=%s/nowhere dbname=postgres user=cuzk" % TMP)
    p = subprocess.run([DAEMON, "--config", path, "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2, "database down at start: exit status %d" % p.returncode)
    check("cluster database" in p.stderr and "cannot be reached" in p.stderr and
          "nowhere" in p.stderr, "database down at start: message %r" % p.stderr[-400:])


def main():
    t0 = time.time()
    test_database_down_at_start()
    a, b = Node("node-a"), Node("node-b")

    # Jobs submitted to one node are proved by both; AwaitProof on the other returns them.
    job = a.call("SubmitProof", circuit_id="bn-pos", witnesses=[POS] * 12).job_id
    r = b.call("AwaitProof", job_id=job)
    check(r.state == COMPLETED and len(r.proofs) == 12 and r.partitions_done == 12,
          "12-partition job completed, awaited on the other node: %s" % r.state)
    nodes = proved_by(job)
    check("node-a|" in nodes and "node-b|" in nodes, "both nodes proved partitions: %r" % nodes)
    check(a.log("partition proved job=%s" % job) and b.log("partition proved job=%s" % job),
          "both nodes' logs show proved partitions")
    snarkjs_verify("bn128/poseidon_vk.json", r.proofs[0], "partition 0")
    snarkjs_verify("bn128/poseidon_vk.json", r.proofs[11], "partition 11")
    ra = a.call("AwaitProof", job_id=job)
    check([p.proof_json for p in ra.proofs] == [p.proof_json for p in r.proofs],
          "both nodes return the same proofs in partition order")
    check(r.timings.prove_ms > 0 and r.timings.total_ms > 0, "timings summed from the rows")

    # BLS12-381: the compressed proof travels through the database too.
    rb = a.call("Prove", circuit_id="bls-pos", witnesses=[BLS_POS])
    check(rb.state == COMPLETED and len(rb.proofs[0].proof_compressed) == 192,
          "bls12381 proof with its 192-byte compressed form")
    snarkjs_verify("bls12381/poseidon_vk.json", rb.proofs[0], "bls12381")

    # request_id holds cluster-wide.
    s1 = a.call("SubmitProof", circuit_id="bn-pos", request_id="rid-1", witnesses=[POS])
    s2 = b.call("SubmitProof", circuit_id="bn-pos", request_id="rid-1", witnesses=[POS])
    check(s1.job_id == s2.job_id and not s1.existing and s2.existing,
          "same request_id on two nodes: one job")
    expect_error(lambda: b.call("SubmitProof", circuit_id="bn-pos", request_id="rid-1",
                                witnesses=[POS] * 2),
                 grpc.StatusCode.INVALID_ARGUMENT, "already used", "request_id reused")
    expect_error(lambda: a.call("SubmitProof", circuit_id="nope", witnesses=[POS]),
                 grpc.StatusCode.NOT_FOUND, "unknown circuit 'nope'", "unknown circuit")
    expect_error(lambda: a.call("AwaitProof", job_id="c-no-such-job"),
                 grpc.StatusCode.NOT_FOUND, "unknown job", "unknown job")
    corrupt = bytearray(POS)
    corrupt[0:4] = b"xxxx"
    expect_error(lambda: a.call("SubmitProof", circuit_id="bn-pos", witnesses=[bytes(corrupt)]),
                 grpc.StatusCode.INVALID_ARGUMENT, "BAD_FORMAT", "corrupt witness")
    check(b.call("AwaitProof", job_id=s1.job_id).state == COMPLETED, "request_id job completed")

    # The fleet view.
    st = b.call("GetStatus")
    names = sorted(n.node_id for n in st.cluster.nodes if n.alive)
    check(st.cluster.node_id == "node-b" and names == ["node-a", "node-b"],
          "fleet view lists both nodes alive: %s" % st.cluster)
    check(all("bn-chain" in n.circuits and n.address for n in st.cluster.nodes if n.alive),
          "fleet view has circuits and addresses")

    # Cancel from any node stops the job everywhere.
    job = a.call("SubmitProof", circuit_id="bn-chain", witnesses=[CHAIN] * 30).job_id
    wait_for(lambda: sql("SELECT count(*) FROM cuzk_results WHERE job_id = '%s'" % job) >= "1",
             60, "a chain partition proved")
    c = b.call("CancelProof", job_id=job)
    check(c.cancelled and c.state == CANCELLED, "CancelProof on the other node: %s" % c)
    done_at_cancel = int(sql("SELECT count(*) FROM cuzk_results WHERE job_id = '%s'" % job))
    ra = a.call("AwaitProof", job_id=job)
    check(ra.state == CANCELLED and ra.partitions_done < 30, "cancelled job seen on node a")
    wait_for(lambda: sql("SELECT count(*) FROM cuzk_partitions WHERE job_id = '%s' AND state = 1"
                         % job) == "0", 10, "no partition of the cancelled job running")
    time.sleep(1.5)  # a partition in flight at the cancel ends and is not recorded
    check(int(sql("SELECT count(*) FROM cuzk_results WHERE job_id = '%s'" % job)) == done_at_cancel,
          "no partition recorded after the cancel")
    check(a.call("CancelProof", job_id=job).cancelled is False, "a second cancel: already ended")
    wait_for(lambda: a.call("GetStatus").busy_workers == 0 and b.call("GetStatus").busy_workers == 0,
             20, "both engines idle after the cancel")

    # kill -9 of a node mid-partition: its partition is proved elsewhere after the lease.
    job = None
    for attempt in range(5):
        job = a.call("SubmitProof", circuit_id="bn-chain", witnesses=[CHAIN] * 4).job_id
        wait_for(lambda: a.log("partition claimed job=%s" % job), 30, "node a claims")
        a.kill9()
        held = sql("SELECT count(*) FROM cuzk_partitions WHERE job_id = '%s' AND state = 1 "
                   "AND lease_owner = 'node-a'" % job)
        if held != "0":
            break
        a = Node("node-a")  # it finished before the kill; try again
    check(held != "0", "node a died holding a lease")
    t_kill = time.time()
    r = b.call("AwaitProof", job_id=job)
    check(r.state == COMPLETED and len(r.proofs) == 4, "job of the killed node completed: %s" %
          r.state)
    check(b.log("lease_expired_on=node-a"), "node b reclaimed node a's expired lease")
    check(time.time() - t_kill >= 1.5, "the reclaim waited for the lease")
    snarkjs_verify("bn128/chain_vk.json", r.proofs[3], "partition after kill -9")
    st = b.call("GetStatus")
    check([n.alive for n in st.cluster.nodes if n.node_id == "node-a"] == [False],
          "the killed node is not alive in the fleet view")

    # The restarted node rejoins and proves again.
    a = Node("node-a")
    job = b.call("SubmitProof", circuit_id="bn-pos", witnesses=[POS] * 16).job_id
    r = a.call("AwaitProof", job_id=job)
    check(r.state == COMPLETED and len(r.proofs) == 16, "job after the restart")
    check(a.log("partition proved job=%s" % job), "the restarted node proved partitions")
    check(a.stop() == 0 and b.stop() == 0, "clean SIGTERM exit")

    # The database restarted under load: nodes reconnect, nothing is lost or recorded twice.
    # Leases longer than the outage, so no partition changes hands. Node a stores the witnesses
    # it accepts as files in a shared folder (node b reads them there); node b does without
    # LISTEN/NOTIFY (polling only).
    shared = os.path.join(TMP, "shared")
    os.mkdir(shared)
    a = Node("node-a", lease="10s", extra='witness_storage = "shared_dir"\nwitness_dir = "%s"' %
             shared)
    b = Node("node-b", lease="10s", extra="notify = false")
    jobs = [a.call("SubmitProof", circuit_id="bn-chain", witnesses=[CHAIN] * 4).job_id
            for _ in range(2)]
    wait_for(lambda: a.log("partition proved job=%s" % jobs[0]) or
             b.log("partition proved job=%s" % jobs[0]), 30, "work under way")
    pg("down")
    late = {}
    th = threading.Thread(target=lambda: late.update(
        r=b.call("SubmitProof", circuit_id="bn-pos", witnesses=[POS] * 2)))
    th.start()  # a submission while the database is down waits for it
    time.sleep(2)
    pg("up")
    th.join(60)
    check("r" in late, "a submission during the outage went through once the database was back")
    if "r" in late:
        jobs.append(late["r"].job_id)
    for j in jobs:
        r = b.call("AwaitProof", job_id=j)
        n = r.partitions
        check(r.state == COMPLETED and len(r.proofs) == n, "job %s after the restart: %s" %
              (j, r.state))
        # A node logs after its commit, so the line may trail AwaitProof; and a commit whose
        # reply the restart cut off is retried and then found recorded (logged as dropped).
        def logged():
            return sum(1 for x in (a, b) for l in x.log("job=%s " % j)
                       if "partition proved" in l or "partition result dropped" in l)
        t_end = time.time() + 10
        while logged() < n and time.time() < t_end:
            time.sleep(0.05)
        check(logged() == n, "job %s: %d partitions recorded once each (%d)" % (j, n, logged()))
        check(sql("SELECT count(*) FROM cuzk_results WHERE job_id = '%s'" % j) == str(n),
              "job %s: one result row a partition" % j)
        check(sql("SELECT max(attempt) FROM cuzk_results WHERE job_id = '%s'" % j) == "1",
              "job %s: no partition changed hands" % j)
    snarkjs_verify("bn128/chain_vk.json", b.call("AwaitProof", job_id=jobs[0]).proofs[0],
                   "after the database restart")
    check(sql("SELECT count(*) FROM cuzk_partitions WHERE job_id = '%s' AND witness_path LIKE "
              "'%s/%%'" % (jobs[0], shared)) == "4", "node a's witnesses were files")
    check("node-b|" in proved_by(jobs[0]) or "node-b|" in proved_by(jobs[1]),
          "node b proved from node a's shared files: %r" % proved_by(jobs[0]))
    left = [f for _, _, fs in os.walk(shared) for f in fs]
    check(left == [], "witness files removed once proved: %r" % left)
    check(a.log("cluster database reachable again") or b.log("cluster database reachable again"),
          "a node logged the reconnection")
    check(a.stop() == 0 and b.stop() == 0, "clean SIGTERM exit after the restart")
    check(sql("SELECT count(*) FROM cuzk_partitions WHERE state = 1") == "0",
          "no lease left behind by stopped nodes")

    print("cluster_test: %d checks, %d failed, %.1f s" % (checks, failures, time.time() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
