#!/usr/bin/python3
"""cuzk-client: a small command-line client for cuzk-daemon (service cuzk.v1.ProvingService).

Needs Debian's python3-grpcio and python3-protobuf (run it with /usr/bin/python3) and protoc
(protobuf-compiler): the message classes are generated from proto/cuzk/v1/proving.proto into a
temporary folder at start, so nothing generated is committed.

  cuzk-client.py [--addr HOST:PORT | --unix PATH] [--token-file F] [--tls-ca CA.pem
                 [--tls-cert C.pem --tls-key K.pem]] prove CIRCUIT W.wtns [...] [--out DIR]
                 [--request-id ID] [--priority low|normal|high|critical]
  cuzk-client.py prove CIRCUIT --seeds 1,2,3 [...]  a generated key's circuit: witness seeds
  cuzk-client.py prove CIRCUIT --input in.json [--input in2.json ...]
                                                    a circuit with a witness program (wasm or
                                                    witness_cmd): circuit inputs, one file per
                                                    partition; the daemon computes the witnesses
  cuzk-client.py submit CIRCUIT W.wtns [...]        prints the job id
  cuzk-client.py await JOB [--timeout-ms N] [--out DIR]
  cuzk-client.py status [--memory]                  --memory: where the large bytes are, a table
  cuzk-client.py cancel JOB | metrics | list | preload CIRCUIT | evict CIRCUIT

prove / await write DIR/proof.json and DIR/public.json (one partition) or proof_K.json /
public_K.json per partition K, plus proof_K.bin (192-byte compressed) on BLS12-381, and print
a JSON summary. Exit status: 0 ok, 1 the job failed or was cancelled, 2 a gRPC error.

--token-file names a file holding the bearer token alone (sent as `authorization: Bearer ..`);
--tls-ca the CA that signed the daemon's certificate (TLS), with --tls-cert / --tls-key the
client's certificate for mutual TLS; --tls-name the name to expect in the daemon's
certificate when it differs from the address's host.
"""
import argparse
import atexit
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import grpc
    importlib.import_module("google.protobuf")  # the generated classes need it
except ImportError as _e:
    sys.stderr.write("cuzk-client: %s: run this with Debian's /usr/bin/python3 and install "
                     "python3-grpcio and python3-protobuf (scripts/install-deps)\n" % _e)
    sys.exit(2)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO_DIR = os.path.join(ROOT, "proto")
SERVICE = "/cuzk.v1.ProvingService/"
_pb = None


def pb():
    """The generated proving_pb2 module (generated once per process)."""
    global _pb
    # CUZK_PB_DIR: a folder holding cuzk/v1/proving_pb2.py generated beforehand (for machines
    # without protoc); when it lacks the module, it is generated there.
    pre = os.environ.get("CUZK_PB_DIR")
    if _pb is None and pre and os.path.exists(os.path.join(pre, "cuzk/v1/proving_pb2.py")):
        sys.path.insert(0, pre)
        _pb = importlib.import_module("cuzk.v1.proving_pb2")
    if _pb is None:
        if pre:
            out = pre
            os.makedirs(out, exist_ok=True)
        else:
            out = tempfile.mkdtemp(prefix="cuzk-pb-")
            atexit.register(shutil.rmtree, out, True)
        protoc = ["protoc"]
        if shutil.which("protoc") is None:
            # python3-grpc-tools bundles a protoc as a module; else say what to install
            if importlib.util.find_spec("grpc_tools") is None:
                sys.stderr.write("cuzk-client: protoc not found: install protobuf-compiler "
                                 "(scripts/install-deps); it generates the message classes\n")
                sys.exit(2)
            protoc = [sys.executable, "-m", "grpc_tools.protoc"]
        subprocess.run(protoc + ["-I" + PROTO_DIR, "--python_out=" + out,
                                 os.path.join(PROTO_DIR, "cuzk/v1/proving.proto")], check=True)
        sys.path.insert(0, out)
        _pb = importlib.import_module("cuzk.v1.proving_pb2")
    return _pb


METHODS = {
    "SubmitProof": ("SubmitProofRequest", "SubmitProofResponse"),
    "AwaitProof": ("AwaitProofRequest", "ProofResult"),
    "Prove": ("SubmitProofRequest", "ProofResult"),
    "CancelProof": ("CancelProofRequest", "CancelProofResponse"),
    "GetStatus": ("GetStatusRequest", "GetStatusResponse"),
    "GetMetrics": ("GetMetricsRequest", "GetMetricsResponse"),
    "ListCircuits": ("ListCircuitsRequest", "ListCircuitsResponse"),
    "PreloadKey": ("PreloadKeyRequest", "PreloadKeyResponse"),
    "EvictKey": ("EvictKeyRequest", "EvictKeyResponse"),
}


def read_token(path):
    """The bearer token in a file of its own (surrounding whitespace dropped)."""
    with open(path) as f:
        return f.read().strip()


def _read(path):
    if not path:
        return None
    with open(path, "rb") as f:
        return f.read()


class Client:
    """Unary calls to the daemon through grpc's generic channel API. token: sent on every call;
    tls_ca: a TLS channel trusting that CA (PEM bytes or path), with tls_cert / tls_key the
    client's certificate (mutual TLS); tls_name overrides the name checked in the daemon's
    certificate."""

    def __init__(self, addr, max_message=(2 << 30) - 1, token=None, tls_ca=None, tls_cert=None,
                 tls_key=None, tls_name=None):
        opts = [("grpc.max_receive_message_length", max_message),
                ("grpc.max_send_message_length", max_message)]
        if tls_ca:
            rd = (lambda x: x if isinstance(x, bytes) or x is None else _read(x))
            creds = grpc.ssl_channel_credentials(root_certificates=rd(tls_ca),
                                                 private_key=rd(tls_key),
                                                 certificate_chain=rd(tls_cert))
            if tls_name:
                opts.append(("grpc.ssl_target_name_override", tls_name))
            self.channel = grpc.secure_channel(addr, creds, options=opts)
        else:
            self.channel = grpc.insecure_channel(addr, options=opts)
        self.metadata = (("authorization", "Bearer " + token),) if token else None
        self.pb = pb()
        self._stubs = {}
        for name, (req, resp) in METHODS.items():
            self._stubs[name] = self.channel.unary_unary(
                SERVICE + name,
                request_serializer=getattr(self.pb, req).SerializeToString,
                response_deserializer=getattr(self.pb, resp).FromString)

    def call(self, method, timeout=None, **fields):
        req = getattr(self.pb, METHODS[method][0])(**fields)
        return self._stubs[method](req, timeout=timeout, metadata=self.metadata)

    def future(self, method, timeout=None, **fields):
        req = getattr(self.pb, METHODS[method][0])(**fields)
        return self._stubs[method].future(req, timeout=timeout, metadata=self.metadata)

    def wait_ready(self, timeout=30):
        grpc.channel_ready_future(self.channel).result(timeout=timeout)

    def close(self):
        self.channel.close()


PRIORITIES = {"default": 0, "low": 1, "normal": 2, "high": 3, "critical": 4}


def write_result(res, out):
    os.makedirs(out, exist_ok=True)
    n = len(res.proofs)
    files = []
    for k, p in enumerate(res.proofs):
        sfx = "" if n == 1 else "_%d" % k
        for name, data in (("proof%s.json" % sfx, p.proof_json),
                           ("public%s.json" % sfx, p.public_json)):
            with open(os.path.join(out, name), "w") as f:
                f.write(data)
            files.append(name)
        if p.proof_compressed:
            name = "proof_%d.bin" % k
            with open(os.path.join(out, name), "wb") as f:
                f.write(p.proof_compressed)
            files.append(name)
    return files


def summary(res):
    st = pb().JobState.Name(res.state)
    d = {"job_id": res.job_id, "state": st, "partitions": res.partitions,
         "timings_ms": {"queue": round(res.timings.queue_ms, 2),
                        "synthesis": round(res.timings.synthesis_ms, 2),
                        "prove": round(res.timings.prove_ms, 2),
                        "total": round(res.timings.total_ms, 2)}}
    if res.timings.witness_ms:
        d["timings_ms"]["witness"] = round(res.timings.witness_ms, 2)
    if res.HasField("error"):
        d["error"] = {"code": res.error.code, "message": res.error.message}
    return d


def mib(n):
    return "%.1f MiB" % (n / 2**20)


def memory_table(st):
    """GetStatus's bytes by owner, one line each: keys by tier, witnesses, working sets,
    page-locked buffers, the daemon's resident memory, each GPU's memory."""
    rows = [("keys, host (resident)", st.keys_bytes),
            ("keys, page-locked (part of host)", st.keys_pinned_bytes),
            ("keys, staged on GPUs", st.keys_gpu_bytes),
            ("keys, cache files (mapped)", st.keys_mapped_bytes),
            ("witnesses received (of %s)" % mib(st.witness_budget_limit), st.witness_in_use),
            ("working sets reserved (of %s)" % mib(st.budget_limit), st.budget_in_use),
            ("working sets allocated", st.working_allocated),
            ("working kept free for a GPU fault's CPU fallback", st.fallback_reserve),
            ("witnesses page-locked", st.witness_pinned_bytes)]
    rows += [("  working: %s" % m.owner, m.in_use) for m in st.memory
             if not m.owner.startswith("keys_") and m.in_use]
    rows += [("daemon resident (RSS)", st.host_rss), ("daemon resident peak", st.host_rss_peak)]
    for g in st.gpus:
        rows.append(("gpu%d keys staged (budget %s)" % (g.device, mib(g.key_budget)), g.key_bytes))
        rows.append(("gpu%d scratch estimate" % g.device, g.scratch_estimate))
        if g.memory_total:
            rows.append(("gpu%d memory used (of %s)" % (g.device, mib(g.memory_total)),
                         g.memory_used))
    w = max(len(r[0]) for r in rows)
    return "\n".join("%-*s %14s" % (w, name, mib(v)) for name, v in rows)


def add_connection_args(ap):
    """--addr / --unix, --token-file, --tls-ca, --tls-cert, --tls-key, --tls-name."""
    ap.add_argument("--addr", default="127.0.0.1:9820")
    ap.add_argument("--unix", metavar="PATH", help="the daemon's unix socket (instead of --addr)")
    ap.add_argument("--token-file", metavar="FILE", help="bearer token (the file holds it alone)")
    ap.add_argument("--tls-ca", metavar="PEM", help="TLS: the CA of the daemon's certificate")
    ap.add_argument("--tls-cert", metavar="PEM", help="mutual TLS: this client's certificate")
    ap.add_argument("--tls-key", metavar="PEM", help="mutual TLS: this client's key")
    ap.add_argument("--tls-name", metavar="NAME", help="name expected in the daemon's certificate")


def connection_kwargs(a):
    """Client() keyword arguments from add_connection_args' options."""
    if bool(a.tls_cert) != bool(a.tls_key):
        raise SystemExit("cuzk: --tls-cert and --tls-key go together")
    if a.tls_cert and not a.tls_ca:
        raise SystemExit("cuzk: --tls-cert needs --tls-ca")
    return dict(token=read_token(a.token_file) if a.token_file else None, tls_ca=a.tls_ca,
                tls_cert=a.tls_cert, tls_key=a.tls_key, tls_name=a.tls_name)


def connection_addr(a):
    return "unix:" + os.path.abspath(a.unix) if a.unix else a.addr


def client_from_args(a):
    return Client(connection_addr(a), **connection_kwargs(a))


def main(argv):
    ap = argparse.ArgumentParser(description="client for cuzk-daemon")
    add_connection_args(ap)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("prove", "submit"):
        p = sub.add_parser(name)
        p.add_argument("circuit")
        p.add_argument("witness", nargs="*")
        p.add_argument("--seeds", default="",
                       help="witness seeds (comma separated), one per partition, instead of "
                            "witness files: for a circuit whose key the daemon generates")
        p.add_argument("--input", action="append", default=[], metavar="FILE",
                       help="circuit inputs (input.json as snarkjs reads it), one per partition "
                            "(repeat the option), instead of witness files: for a circuit "
                            "with a witness program")
        p.add_argument("--request-id", default="")
        p.add_argument("--priority", choices=PRIORITIES, default="default")
        p.add_argument("--out", default=".")
    p = sub.add_parser("await")
    p.add_argument("job")
    p.add_argument("--timeout-ms", type=int, default=0)
    p.add_argument("--out", default=".")
    sub.add_parser("cancel").add_argument("job")
    sub.add_parser("status").add_argument("--memory", action="store_true")
    sub.add_parser("metrics")
    sub.add_parser("list")
    sub.add_parser("preload").add_argument("circuit")
    sub.add_parser("evict").add_argument("circuit")
    a = ap.parse_args(argv)
    c = client_from_args(a)
    from google.protobuf import json_format
    try:
        if a.cmd in ("prove", "submit"):
            if bool(a.witness) + bool(a.seeds) + bool(a.input) != 1:
                ap.error("give witness files, --seeds or --input: one of the three")
            wit = []
            for w in a.witness:
                with open(w, "rb") as f:
                    wit.append(f.read())
            inputs = []
            for path in a.input:
                with open(path, encoding="utf-8") as f:
                    inputs.append(f.read())
            kw = dict(circuit_id=a.circuit, request_id=a.request_id,
                      priority=PRIORITIES[a.priority], witnesses=wit,
                      witness_seeds=[int(x) for x in a.seeds.split(",") if x],
                      inputs_json=inputs)
            if a.cmd == "submit":
                r = c.call("SubmitProof", **kw)
                print(json.dumps({"job_id": r.job_id, "existing": r.existing}))
                return 0
            res = c.call("Prove", **kw)
        elif a.cmd == "await":
            res = c.call("AwaitProof", job_id=a.job, timeout_ms=a.timeout_ms)
        else:
            if a.cmd == "cancel":
                r = c.call("CancelProof", job_id=a.job)
            elif a.cmd == "status":
                r = c.call("GetStatus")
                if a.memory:
                    print(memory_table(r))
                    return 0
            elif a.cmd == "metrics":
                sys.stdout.write(c.call("GetMetrics").text)
                return 0
            elif a.cmd == "list":
                r = c.call("ListCircuits")
            elif a.cmd == "preload":
                r = c.call("PreloadKey", circuit_id=a.circuit)
            else:
                r = c.call("EvictKey", circuit_id=a.circuit)
            print(json_format.MessageToJson(r, preserving_proto_field_name=True))
            return 0
    except grpc.RpcError as e:
        print("cuzk-client: %s: %s" % (e.code().name, e.details()), file=sys.stderr)
        return 2
    finally:
        c.close()
    d = summary(res)
    if res.state == pb().JobState.Value("JOB_STATE_COMPLETED"):
        d["files"] = write_result(res, a.out)
    print(json.dumps(d))
    return 0 if res.state == pb().JobState.Value("JOB_STATE_COMPLETED") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
