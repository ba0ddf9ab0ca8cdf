"""The daemon and the gRPC client: a spawned or running cuzk-daemon (Daemon), its memory
sampled in the background (Sampler), the witnesses a request carries, and Bench, the session
every command runs through (scripts/cuzk-client.py does the gRPC plumbing)."""
import importlib.util
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from . import paths
from .checks import check_result

# The gRPC plumbing is scripts/cuzk-client.py's (imported, not copied); it needs grpc too.
_spec = importlib.util.spec_from_file_location(
    "cuzk_client", os.path.join(paths.SRC, "scripts/cuzk-client.py"))
cc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cc)

import grpc  # noqa: E402  (after cuzk-client, which checks for it with a message)


class DaemonDied(Exception):
    pass


def machine():
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu_model": model, "cores": os.cpu_count(), "hostname": platform.node(),
            "kernel": platform.release()}


def proc_mem(pid):
    """(VmRSS, VmHWM) in bytes, or None when the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            txt = f.read()
    except OSError:
        return None
    vals = {}
    for k in ("VmRSS", "VmHWM"):
        m = re.search(r"^%s:\s+(\d+) kB" % k, txt, re.M)
        vals[k] = int(m.group(1)) * 1024 if m else 0
    return vals["VmRSS"], vals["VmHWM"]


def _with_pdeathsig(cmd):
    """cmd run under setpriv --pdeathsig TERM (util-linux) when it is there: the daemon gets
    SIGTERM when cuzk-bench dies, so a killed bench never leaves a daemon behind. (This was a
    Popen preexec_fn calling prctl: Python code run in the forked child while gRPC's threads
    are live, a pattern gRPC Python reports crashes with (grpc/grpc#43055 and older ones). The
    bench once segfaulted while spawning a daemon in `compare` in CI; without preexec_fn, Popen
    forks and execs with no Python code in between.)"""
    sp = shutil.which("setpriv")
    return [sp, "--pdeathsig", "TERM", "--"] + cmd if sp else cmd


class Daemon:
    """A spawned cuzk-daemon on 127.0.0.1:0 (port from its ready line)."""

    def __init__(self, config, binary, start_timeout=600, log_path=None):
        self.lines = []
        self.log = open(log_path, "a", buffering=1) if log_path else None
        self.ready = threading.Event()
        self.ready_line = None
        self.proc = subprocess.Popen(
            _with_pdeathsig([binary, "--config", config, "--listen", "127.0.0.1:0"]),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        threading.Thread(target=self._read, daemon=True).start()
        # a large key's first load (no preprocessed cache yet) can take minutes; a daemon that
        # fails to start exits at once and is seen by poll() without waiting for this
        deadline = time.time() + start_timeout
        while not self.ready.wait(0.1):
            if self.proc.poll() is not None or time.time() > deadline:
                self.proc.kill()
                raise RuntimeError("cuzk-daemon did not start (status %s):\n%s" %
                                   (self.proc.poll(), "".join(self.lines[-20:])))
        self.addr = re.search(r"serving on (\S+)", self.ready_line).group(1)

    def _read(self):
        for line in self.proc.stderr:
            if self.log:
                self.log.write(line)
            self.lines.append(line)
            if len(self.lines) > 2000:
                del self.lines[:1000]
            if self.ready_line is None and "cuzk-daemon ready, serving on " in line:
                self.ready_line = line.rstrip()
                self.ready.set()
        self.ready.set()

    def exited(self):
        return self.proc.poll()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


class Sampler(threading.Thread):
    """Samples the daemon's memory every `period` seconds until stopped: the process's RSS and
    VmHWM (/proc when the pid is known, else GetStatus's sum) into `samples`, and GetStatus's
    memory by owner, keys_bytes and budget_in_use into `owners` (for the plots)."""

    def __init__(self, bench, period=0.1):
        super().__init__(daemon=True)
        self.bench, self.period = bench, period
        self.samples = []  # (t, rss, hwm)
        self.owners = []   # (t, {owner: in_use}, keys_bytes, budget_in_use)
        self.gpu = []      # (t, bytes): the daemon's GPU memory from nvidia-smi, about 1/s
        self.gpu_status = []  # (t, bytes): device memory in use, all GPUs (GetStatus)
        self.budgets = None   # the daemon's host memory budgets (GetStatus), the last seen
        self.halt = threading.Event()
        self.t0 = time.time()
        self.use_nvsmi = bool(bench.pid and shutil.which("nvidia-smi"))

    def _owners(self):
        try:
            st = self.bench.client.call("GetStatus", timeout=2)
        except grpc.RpcError:
            return
        if len(st.gpus) and any(g.memory_total for g in st.gpus):
            self.gpu_status.append((round(time.time() - self.t0, 3),
                                    sum(g.memory_used for g in st.gpus)))
        own = {o.owner: o.in_use for o in st.memory}
        self.budgets = {"working_budget": st.budget_limit,
                        "witness_budget": getattr(st, "witness_budget_limit", 0),
                        "key_budget": st.key_budget, "pinned_budget": st.pinned_budget}
        if getattr(st, "witness_budget_limit", 0):
            own["witnesses (accepted jobs)"] = st.witness_in_use
        self.owners.append((round(time.time() - self.t0, 3), own, st.keys_bytes,
                            st.budget_in_use))

    def run(self):
        last_gpu = 0.0
        while not self.halt.is_set():
            m = self.bench.memory()
            if m is not None:
                self.samples.append((round(time.time() - self.t0, 3), m[0], m[1]))
            self._owners()
            if self.use_nvsmi and time.time() - last_gpu >= 1.0:
                last_gpu = time.time()
                g = gpu_mem(self.bench.pid)
                if g is None:
                    self.use_nvsmi = False
                else:
                    self.gpu.append((round(time.time() - self.t0, 3), g))
            self.halt.wait(self.period)

    def stop(self):
        self.halt.set()
        self.join(5)
        m = self.bench.memory()  # one sample at the end: short runs get at least two
        if m is not None:
            self.samples.append((round(time.time() - self.t0, 3), m[0], m[1]))
        if not self.samples:
            return {"source": self.bench.mem_source, "samples": 0}
        d = {"source": self.bench.mem_source, "samples": len(self.samples),
             "peak_rss": max(s[1] for s in self.samples),
             "peak_hwm": max(s[2] for s in self.samples),
             "last_rss": self.samples[-1][1]}
        if self.gpu:
            d["peak_gpu"] = max(g[1] for g in self.gpu)
            d["gpu_curve"] = self.gpu
        if self.gpu_status:
            d["peak_gpu_device"] = max(g[1] for g in self.gpu_status)
        if self.budgets:
            d["budgets"] = self.budgets
        if self.owners:
            # where the bytes were when the daemon held the most: its owners, keys and the
            # working budget in use at the sample with the largest sum
            o = max(self.owners, key=lambda o: sum(o[1].values()) + o[2])
            d["peak_owners"] = {"t": o[0], "owners": o[1], "keys": o[2], "budget_in_use": o[3]}
            d["peak_keys"] = max(o[2] for o in self.owners)
        return d


class Bench:
    def __init__(self, a):
        self.a = a
        self.daemon = None
        self.pid = a.pid
        if a.spawn:
            binary = os.environ.get("CUZK_DAEMON") or os.path.join(paths.HERE, "cuzk-daemon")
            if not os.path.exists(binary):
                binary = os.path.join(paths.SRC, "build/bin/cuzk-daemon")
            self.daemon = Daemon(a.spawn, binary, a.start_timeout, a.daemon_log)
            self.pid = self.daemon.pid
            addr = self.daemon.addr
            print("daemon: pid %d serving on %s (%s)" % (self.pid, addr, binary),
                  file=sys.stderr, flush=True)
        else:
            addr = cc.connection_addr(a)
        self.client = cc.Client(addr, **cc.connection_kwargs(a))
        self.pb = cc.pb()
        self.client.wait_ready(30)
        self.mem_source = "proc" if self.pid else "GetStatus"

    def check_alive(self):
        if self.daemon and self.daemon.exited() is not None:
            raise DaemonDied(self.daemon.exited())

    def memory(self):
        if self.pid:
            return proc_mem(self.pid)
        try:
            st = self.client.call("GetStatus", timeout=5)
        except grpc.RpcError:
            return None
        used = sum(o.in_use for o in st.memory) + st.keys_bytes
        return used, max(used, st.budget_peak + st.keys_bytes)

    def n_public(self, circuit):
        """The circuit's number of public signals (ListCircuits), cached; None if unknown."""
        if not hasattr(self, "_circuits"):
            self._circuits = {c.id: c for c in self.client.call("ListCircuits", timeout=30)
                              .circuits}
        c = self._circuits.get(circuit)
        return c.n_public if c else None

    def prove_one(self, circuit, witnesses, priority=0, expect_public=None, keep_proofs=False,
                  fut=None, t0=None):
        """One Prove call; returns a record. Polls the daemon so a death is seen at once.
        With expect_public (per partition, its witness's public values as decimal strings),
        every partition's public.json must equal them and every proof.json must be a
        well-formed groth16 proof."""
        t0 = t0 or time.time()
        if fut is None:
            if witnesses and isinstance(witnesses[0], WitnessSeed):
                req = self.pb.SubmitProofRequest(circuit_id=circuit, witness_seeds=witnesses,
                                                 priority=priority)
            elif witnesses and isinstance(witnesses[0], WitnessPath):
                req = self.pb.SubmitProofRequest(circuit_id=circuit, witness_paths=witnesses,
                                                 priority=priority)
            else:
                req = self.pb.SubmitProofRequest(circuit_id=circuit, witnesses=witnesses,
                                                 priority=priority)
            fut = self.client._stubs["Prove"].future(req, timeout=3600,
                                                    metadata=self.client.metadata)
        while True:
            try:
                res = fut.result(timeout=0.2)
                break
            except grpc.FutureTimeoutError:
                if self.daemon and self.daemon.exited() is not None:
                    fut.cancel()
                    raise DaemonDied(self.daemon.exited())
            except grpc.RpcError as e:
                self.check_alive()
                time.sleep(0.3)  # the process may be dying: give poll() a moment
                self.check_alive()
                return {"ok": False, "latency_s": time.time() - t0, "t_end": time.time(),
                        "error": "%s: %s" % (e.code().name, e.details())}
        return self.record(res, t0, len(witnesses), expect_public, keep_proofs)

    def record(self, res, t0, n_parts, expect_public=None, keep_proofs=False):
        t_end = time.time()
        ok = res.state == self.pb.JobState.Value("JOB_STATE_COMPLETED")
        r = {"ok": ok, "latency_s": t_end - t0, "t_end": t_end, "job_id": res.job_id,
             "partitions": res.partitions,
             "stages_ms": stages_ms(res.timings)}
        if not ok:
            r["error"] = "%s %s: %s" % (self.pb.JobState.Name(res.state), res.error.code,
                                        res.error.message)
        elif expect_public is not None:
            why = check_result(res, expect_public, n_parts)
            r["checked"] = why is None
            if why:
                r["ok"] = False
                r["error"] = "result check: " + why
        if ok and keep_proofs:
            r["_proofs"] = [(p.public_json, p.proof_json) for p in res.proofs]
        r["_res"] = res
        return r

    def close(self):
        self.client.close()
        rc = None
        if self.daemon:
            rc = self.daemon.stop()
        return rc


def stages_ms(timings):
    """Every Timings field (queue, synthesis, prove, budget_wait, total, and whatever the
    daemon's proto adds, e.g. gpu, g2), named without the _ms suffix."""
    return {f.name[:-3] if f.name.endswith("_ms") else f.name: getattr(timings, f.name)
            for f in timings.DESCRIPTOR.fields}


def gpu_mem(pid):
    """GPU memory (bytes) the process holds, summed over devices (nvidia-smi), or None."""
    try:
        v = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True,
                           timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if v.returncode != 0:
        return None
    tot = 0
    for line in v.stdout.splitlines():
        f = [x.strip() for x in line.split(",")]
        if len(f) == 2 and f[0] == str(pid) and f[1].isdigit():
            tot += int(f[1]) << 20  # MiB
    return tot


def witness_files(a):
    """The witness file of each partition: the --witness files in turn, --partitions of them
    (default: one partition per file); None with --seeds."""
    if getattr(a, "seeds", None):
        return None
    return [a.witness[k % len(a.witness)] for k in range(a.partitions)]


class WitnessSeed(int):
    """A witness sent as a seed (SubmitProof witness_seeds): the daemon makes the witness."""


class WitnessPath(str):
    """A witness sent as a path (SubmitProof witness_paths) rather than as bytes."""


def witnesses(a):
    if getattr(a, "seeds", None):
        return [WitnessSeed(a.seeds[k % len(a.seeds)]) for k in range(a.partitions)]
    if getattr(a, "witness_paths", False):
        return [WitnessPath(os.path.abspath(f)) for f in witness_files(a)]
    data = {}
    for f in a.witness:
        with open(f, "rb") as fh:
            data[f] = fh.read()
    return [data[f] for f in witness_files(a)]
