#!/usr/bin/python3
"""End-to-end tests of cuzk-daemon's access control: bearer tokens with roles (and their
reload on SIGHUP), TLS and mutual TLS with certificates made here by openssl (and their
reload), the unix socket (mode, a live socket kept, a stale one replaced) and the /metrics
token. The real binary, a real gRPC client (python3-grpcio), daemon_test.py's helpers."""
import http.client
import importlib.util
import os
import signal
import socket
import stat
import subprocess
import sys
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("daemon_test", os.path.join(HERE, "daemon_test.py"))
dt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dt)
check, expect_error = dt.check, dt.expect_error
Daemon, run_bad_config = dt.Daemon, dt.run_bad_config
cc, W, TMP, COMPLETED = dt.cc, dt.W, dt.TMP, dt.COMPLETED
SC = grpc.StatusCode

CIRCUITS = """
[keys]
cache = false
[[circuit]]
id = "bn-mul"
zkey = "%(f)s/bn128/multiplier.zkey"
preload = true
[[circuit]]
id = "bn-pos"
zkey = "%(f)s/bn128/poseidon.zkey"
""" % {"f": dt.FIX}

TOK = {"read": "read-token-0123456789abcdef", "prove": "prove-token-0123456789abcdef",
       "prove2": "prove-token-second-0123456789", "admin": "admin-token-0123456789abcdef"}


def write(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def tokens_text(names):
    lines = ["# role token", ""]
    for n in names:
        lines.append("%s  %s" % (n.rstrip("2"), TOK[n]))
    return "\n".join(lines) + "\n"


def wait_log(d, needle, timeout=10):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if any(needle in l for l in d.lines):
            return True
        time.sleep(0.05)
    return False


def as_(d, who, **kw):
    """A client of daemon d that sends who's token (None: no token)."""
    return cc.Client(d.addr, token=TOK.get(who, who), **kw)


def http_get(addr, headers=None):
    host, port = addr.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=10)
    c.request("GET", "/metrics", headers=headers or {})
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    return r.status, body


def test_tokens():
    tf = write(os.path.join(TMP, "tokens"), tokens_text(["read", "prove", "prove2", "admin"]))
    d = Daemon("tokens", CIRCUITS + """
[daemon.auth]
tokens_file = "%s"
[metrics]
listen = "127.0.0.1:0"
require_token = true
""" % tf)
    anon = d.client
    expect_error(lambda: anon.call("GetStatus", timeout=10), SC.UNAUTHENTICATED, "Bearer",
                 "no token")
    for bad in ("not-a-token-at-all-xxxxx", TOK["read"][:-1], TOK["read"] + "x", ""):
        c = as_(d, bad)
        expect_error(lambda: c.call("GetStatus", timeout=10), SC.UNAUTHENTICATED, "",
                     "wrong token %r" % bad[:8])
        c.close()
    rd, pr, pr2, ad = (as_(d, w) for w in ("read", "prove", "prove2", "admin"))
    # The scheme is case-insensitive.
    lc = cc.Client(d.addr)
    lc.metadata = (("authorization", "bearer " + TOK["read"]),)
    check(lc.call("GetStatus", timeout=10).uptime_s >= 0, "lower-case 'bearer' accepted")
    lc.close()
    # read: status, metrics, list; nothing that proves or changes keys.
    check(rd.call("GetStatus", timeout=10).uptime_s >= 0, "read: GetStatus")
    check("cuzk_" in rd.call("GetMetrics", timeout=10).text, "read: GetMetrics")
    check(len(rd.call("ListCircuits", timeout=10).circuits) == 2, "read: ListCircuits")
    expect_error(lambda: rd.call("SubmitProof", circuit_id="bn-mul",
                                 witnesses=[W["bn128/multiplier"]]),
                 SC.PERMISSION_DENIED, "needs role prove; this token has role read",
                 "read: SubmitProof")
    expect_error(lambda: rd.call("PreloadKey", circuit_id="bn-pos"), SC.PERMISSION_DENIED,
                 "role admin", "read: PreloadKey")
    # prove: proves, awaits and cancels its own jobs only.
    r = pr.call("Prove", circuit_id="bn-mul", witnesses=[W["bn128/multiplier"]], timeout=120)
    check(r.state == COMPLETED and len(r.proofs) == 1, "prove: Prove completes: %s" % r.state)
    dt.snarkjs_verify("bn128/multiplier_vk.json", r.proofs[0].public_json, r.proofs[0].proof_json,
                      "proof under a token")
    j = pr.call("SubmitProof", circuit_id="bn-mul", request_id="same",
                witnesses=[W["bn128/multiplier"]]).job_id
    check(pr.call("AwaitProof", job_id=j, timeout=120).state == COMPLETED, "prove: own AwaitProof")
    expect_error(lambda: pr2.call("AwaitProof", job_id=j, timeout=10), SC.PERMISSION_DENIED,
                 "another token", "prove2 awaits prove's job")
    expect_error(lambda: pr2.call("CancelProof", job_id=j, timeout=10), SC.PERMISSION_DENIED,
                 "another token", "prove2 cancels prove's job")
    expect_error(lambda: rd.call("AwaitProof", job_id=j, timeout=10), SC.PERMISSION_DENIED,
                 "another token", "read awaits prove's job")
    # A request_id is one owner's: the same id from another token is another job.
    j2 = pr2.call("SubmitProof", circuit_id="bn-mul", request_id="same",
                  witnesses=[W["bn128/multiplier"]])
    check(j2.job_id != j and not j2.existing,
          "request_id scoped by token: %s vs %s" % (j2.job_id, j))
    j3 = pr.call("SubmitProof", circuit_id="bn-mul", request_id="same",
                 witnesses=[W["bn128/multiplier"]])
    check(j3.job_id == j and j3.existing, "request_id reused by its own token")
    expect_error(lambda: pr.call("PreloadKey", circuit_id="bn-pos"), SC.PERMISSION_DENIED,
                 "role admin", "prove: PreloadKey")
    expect_error(lambda: pr.call("EvictKey", circuit_id="bn-pos"), SC.PERMISSION_DENIED,
                 "role admin", "prove: EvictKey")
    # admin: anyone's jobs, keys.
    check(ad.call("AwaitProof", job_id=j2.job_id, timeout=120).state == COMPLETED,
          "admin awaits another token's job")
    check(ad.call("CancelProof", job_id=j, timeout=10).cancelled is False, "admin cancels any job")
    check(ad.call("PreloadKey", circuit_id="bn-pos", timeout=120).load_ms >= 0, "admin: PreloadKey")
    check(ad.call("EvictKey", circuit_id="bn-pos", timeout=60).was_loaded, "admin: EvictKey")

    # /metrics asks for a token of role read or above.
    maddr = [l.split("addr=http://")[1].split("/metrics")[0] for l in d.lines
             if "metrics endpoint listening" in l][0]
    st, body = http_get(maddr)
    check(st == 401 and "Bearer" in body, "/metrics without a token: %s" % st)
    st, _ = http_get(maddr, {"Authorization": "Bearer " + TOK["prove"][:-1]})
    check(st == 401, "/metrics with a wrong token: %s" % st)
    st, body = http_get(maddr, {"Authorization": "Bearer " + TOK["read"]})
    check(st == 200 and "cuzk_jobs_submitted_total" in body, "/metrics with a read token: %s" % st)

    # SIGHUP: a new file takes effect for the next calls, on the same connection.
    write(tf, tokens_text(["read", "prove", "admin"]) + "read  fresh-token-0123456789abcdef\n")
    d.proc.send_signal(signal.SIGHUP)
    check(wait_log(d, "tokens reloaded"), "reload logged: %s" % "".join(d.lines[-3:]))
    expect_error(lambda: pr2.call("GetStatus", timeout=10), SC.UNAUTHENTICATED, "",
                 "a removed token is refused after SIGHUP")
    fresh = as_(d, "fresh-token-0123456789abcdef")
    check(fresh.call("GetStatus", timeout=10).uptime_s >= 0, "an added token works after SIGHUP")
    check(pr.call("GetStatus", timeout=10).uptime_s >= 0, "a kept token still works")
    # A bad file on reload keeps the tokens in force and says where the file is wrong.
    n = len(d.lines)
    write(tf, tokens_text(["read"]) + "reader  some-token-0123456789abcdef\n")
    d.proc.send_signal(signal.SIGHUP)
    check(wait_log(d, "tokens not reloaded"), "failed reload logged")
    msg = "".join(d.lines[n:])
    check("%s:4: role 'reader'" % tf in msg and TOK["read"] not in msg,
          "reload error names file:line, no token: %s" % msg)
    check(pr.call("GetStatus", timeout=10).uptime_s >= 0, "old tokens kept after a bad reload")
    write(tf, tokens_text(["read"]), 0o644)
    d.proc.send_signal(signal.SIGHUP)
    check(wait_log(d, "chmod 600"), "a readable-by-others file is refused on reload")
    check(pr.call("GetStatus", timeout=10).uptime_s >= 0, "old tokens kept after a refused file")
    for c in (rd, pr, pr2, ad, fresh):
        c.close()
    check(d.stop() == 0, "tokens daemon exits 0")


def test_tokens_config():
    base = "[metrics]\nlisten = \"\"\n[daemon.auth]\ntokens_file = \"%s\"\n"
    loose = write(os.path.join(TMP, "tokens-loose"), tokens_text(["read"]), 0o640)
    run_bad_config("t-mode.toml", base % loose, ["tokens-loose has mode 0640", "chmod 600"])
    run_bad_config("t-dir.toml", base % TMP, ["is not a regular file"])
    run_bad_config("t-none.toml", base % os.path.join(TMP, "nope"), ["nope", "No such file"])
    for name, text, needle in [
            ("t-role", "# c\nread  %s\nsuperuser abcdefghijklmnopqrstu\n" % TOK["read"],
             ":3: role 'superuser' is not one of read, prove, admin"),
            ("t-short", "\n\nprove short\n", ":3: the token has 5 characters"),
            ("t-three", "admin a-b-c-d-e-f-g-h-i-j-k extra\n", ":1: expected 'ROLE TOKEN'"),
            ("t-dup", "read %s\nadmin %s\n" % (TOK["read"], TOK["read"]), ":2: this token is "
             "listed before")]:
        p = write(os.path.join(TMP, name), text)
        run_bad_config(name + ".toml", base % p, [p + needle])
    # Tokens make a network address acceptable (with a warning: no TLS).
    tf = write(os.path.join(TMP, "tokens-net"), tokens_text(["prove"]))
    d = Daemon("tokens-net", base % tf + "[daemon]\nmax_message_size = \"1KiB\"\n",
               ["--listen", "0.0.0.0:0"], client_kw={"token": TOK["prove"]})
    check(d.addr.startswith("0.0.0.0:"), "tokens serve on 0.0.0.0: %s" % d.addr)
    check(any("travel unencrypted" in l for l in d.lines), "warning: tokens without TLS")
    check(d.call("GetStatus").uptime_s >= 0, "tokens on 0.0.0.0 answer")
    # The token is checked before the request is read: no token, a message over the limit,
    # UNAUTHENTICATED (a caller with a token gets the size error).
    big = {"circuit_id": "x", "witnesses": [b"w" * 4096]}
    anon = cc.Client("127.0.0.1:" + d.addr.rsplit(":", 1)[1])
    expect_error(lambda: anon.call("SubmitProof", timeout=10, **big), SC.UNAUTHENTICATED, "",
                 "a large request without a token")
    anon.close()
    expect_error(lambda: d.call("SubmitProof", **big), SC.RESOURCE_EXHAUSTED, "",
                 "a large request with a token")
    check(d.stop() == 0, "tokens-net exits 0")
    # metrics on the network needs require_token or metrics.insecure.
    run_bad_config("m-open.toml", "[metrics]\nlisten = \"0.0.0.0:0\"\n",
                   ["metrics.listen '0.0.0.0:0'", "metrics.require_token", "metrics.insecure"])
    run_bad_config("m-notok.toml", "[metrics]\nrequire_token = true\n",
                   ["metrics.require_token", "tokens_file"])
    run_bad_config("tls-half.toml", "[daemon.tls]\ncert = \"/x.pem\"\n",
                   ["needs both cert and key"])
    run_bad_config("mode.toml", "[daemon]\nsocket_mode = \"0999\"\n", ["daemon.socket_mode",
                                                                      "octal"])
    run_bad_config("caps.toml", "[daemon.auth]\nmax_jobs_per_token = 0\n",
                   ["daemon.auth.max_jobs_per_token"])


def test_token_caps():
    """[daemon.auth] max_*_per_token: a prove token past each cap gets RESOURCE_EXHAUSTED naming
    the key while another prove token goes on; admin is not capped; the counts come back when
    calls and jobs end. The token's jobs stay live behind an admin job of 1000 partitions that
    the single partition worker runs first (submission order)."""
    tf = write(os.path.join(TMP, "tokens-caps"), tokens_text(["prove", "prove2", "admin"]))
    d = Daemon("caps", dt.CIRCUITS + """
[daemon.auth]
tokens_file = "%s"
max_calls_per_token = 4
max_jobs_per_token = 3
max_witness_bytes_per_token = "40KiB"
[synthesis]
partition_workers = 1
[gpus]
host_threads = 1
""" % tf, ["--metrics", ""], client_kw={"token": TOK["admin"]})
    pr, pr2 = as_(d, "prove"), as_(d, "prove2")
    wpos = W["bls12381/poseidon"]  # 16716 bytes: two fit in 40 KiB, three do not
    # admin is not capped: 1000 witnesses (16 MiB) in one job.
    block = d.call("SubmitProof", circuit_id="bls-pos", witnesses=[wpos] * 1000).job_id
    key_w = "daemon.auth.max_witness_bytes_per_token"
    expect_error(lambda: pr.call("SubmitProof", circuit_id="bls-pos", witnesses=[wpos] * 3,
                                 timeout=30), SC.RESOURCE_EXHAUSTED, key_w,
                 "one request over the token's witness bytes")
    a = pr.call("SubmitProof", circuit_id="bls-pos", witnesses=[wpos] * 2, timeout=30).job_id
    expect_error(lambda: pr.call("SubmitProof", circuit_id="bls-pos", witnesses=[wpos],
                                 timeout=30), SC.RESOURCE_EXHAUSTED, key_w,
                 "live jobs' witness bytes and a new request over the cap")
    b2 = pr2.call("SubmitProof", circuit_id="bls-pos", witnesses=[wpos] * 2, timeout=30).job_id
    check(b2 != a, "another token submits its own witness bytes")
    # Jobs: a holds one, two small ones make three.
    mul = {"circuit_id": "bn-mul", "witnesses": [W["bn128/multiplier"]], "timeout": 30}
    m = [pr.call("SubmitProof", **mul).job_id for _ in range(2)]
    expect_error(lambda: pr.call("SubmitProof", **mul), SC.RESOURCE_EXHAUSTED,
                 "daemon.auth.max_jobs_per_token", "a fourth live job of the token")
    expect_error(lambda: pr.call("Prove", **mul), SC.RESOURCE_EXHAUSTED,
                 "daemon.auth.max_jobs_per_token", "Prove counts as a job too")
    check(pr2.call("SubmitProof", **mul).job_id not in m, "another token's jobs go on")
    # Calls: four waits parked on the token's own job hold its four calls.
    waits = [pr.future("AwaitProof", job_id=a, timeout=120) for _ in range(4)]
    t0 = time.time()
    while time.time() - t0 < 20 and (d.metric("cuzk_rpc_calls_parked") or 0) < 4:
        time.sleep(0.05)
    check(d.metric("cuzk_rpc_calls_parked") == 4, "four waits parked")
    expect_error(lambda: pr.call("GetStatus", timeout=10), SC.RESOURCE_EXHAUSTED,
                 "daemon.auth.max_calls_per_token", "a fifth call of the token")
    check(pr2.call("GetStatus", timeout=10).jobs_in_flight >= 1, "another token's calls go on")
    for f in waits:
        f.cancel()
    ok, t0 = False, time.time()
    while not ok and time.time() - t0 < 20:
        try:
            ok = pr.call("GetStatus", timeout=10).uptime_s >= 0
        except grpc.RpcError as e:
            if e.code() != SC.RESOURCE_EXHAUSTED:
                raise
            time.sleep(0.05)
    check(ok, "calls cancelled by the client give the token's calls back")
    # Jobs that end give back their job and witness bytes.
    for j in [a] + m:
        pr.call("CancelProof", job_id=j, timeout=30)
    c = pr.call("SubmitProof", circuit_id="bls-pos", witnesses=[wpos] * 2, timeout=30).job_id
    check(c not in [a] + m, "a submit after the token's jobs ended is accepted")
    m2 = [pr.call("SubmitProof", **mul).job_id for _ in range(2)]
    check(len(set(m2)) == 2, "the job count came back: two more jobs accepted")
    d.call("CancelProof", job_id=block)
    r = pr.call("AwaitProof", job_id=m2[-1], timeout=120)
    check(r.state == COMPLETED, "the token's job completes after the block: %s" % r.state)
    pr.close()
    pr2.close()
    check(d.stop() == 0, "caps daemon exits 0")


# ------------------------------------------------------------------ TLS

def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True)


def make_ca(d, name):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".pem")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=" + name)
    return key, crt


def make_cert(d, name, ca, server):
    key, csr, crt = (os.path.join(d, name + x) for x in (".key", ".csr", ".pem"))
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=%s\n" %
                ("serverAuth" if server else "clientAuth"))
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", csr, "-subj", "/CN=" + name)
    openssl("x509", "-req", "-in", csr, "-CA", ca[1], "-CAkey", ca[0], "-CAcreateserial",
            "-out", crt, "-days", "2", "-extfile", ext)
    os.chmod(key, 0o600)
    return key, crt


def tls_fails(addr, what, **kw):
    c = cc.Client(addr, **kw)
    try:
        c.call("GetStatus", timeout=5)
        check(False, "%s: the call succeeded" % what)
    except grpc.RpcError as e:
        check(e.code() in (SC.UNAVAILABLE, SC.DEADLINE_EXCEEDED), "%s: %s" % (what, e.code()))
    finally:
        c.close()


def test_tls():
    d0 = os.path.join(TMP, "pki")
    os.makedirs(d0, exist_ok=True)
    ca = make_ca(d0, "ca")
    other_ca = make_ca(d0, "other-ca")
    srv = make_cert(d0, "server", ca, True)
    cli = make_cert(d0, "client", ca, False)
    stranger = make_cert(d0, "stranger", other_ca, False)
    ca_pem = ca[1]

    # Server-only TLS.
    d = Daemon("tls", CIRCUITS + "[metrics]\nlisten = \"\"\n[daemon.tls]\ncert = \"%s\"\n"
               "key = \"%s\"\n" % (srv[1], srv[0]), client_kw={"tls_ca": ca_pem})
    r = d.call("Prove", circuit_id="bn-mul", witnesses=[W["bn128/multiplier"]])
    check(r.state == COMPLETED, "Prove over TLS")
    tls_fails(d.addr, "a plaintext client of a TLS port")
    tls_fails(d.addr, "a client that trusts another CA", tls_ca=other_ca[1])
    check(any("tls=server" in l for l in d.lines), "listening line says tls=server")
    r = subprocess.run(["/usr/bin/python3", os.path.join(dt.ROOT, "scripts/cuzk-client.py"),
                        "--addr", d.addr, "--tls-ca", ca_pem, "list"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and "bn-mul" in r.stdout, "cuzk-client --tls-ca list: %s" %
          r.stderr[-300:])
    check(d.stop() == 0, "tls daemon exits 0")

    # Mutual TLS, on a network address (client_ca authenticates), with a certificate reload.
    tls_dir = os.path.join(TMP, "live")
    os.makedirs(tls_dir, exist_ok=True)
    cert_path, key_path = os.path.join(tls_dir, "cert.pem"), os.path.join(tls_dir, "key.pem")
    for src, dst in ((srv[1], cert_path), (srv[0], key_path)):
        with open(src, "rb") as f, open(dst, "wb") as g:
            g.write(f.read())
    mk = {"tls_ca": ca_pem, "tls_cert": cli[1], "tls_key": cli[0], "tls_name": "localhost"}
    d = Daemon("mtls", CIRCUITS + "[metrics]\nlisten = \"\"\n[daemon.tls]\ncert = \"%s\"\n"
               "key = \"%s\"\nclient_ca = \"%s\"\n" % (cert_path, key_path, ca_pem),
               ["--listen", "0.0.0.0:0"], client_kw=mk)
    port = d.addr.rsplit(":", 1)[1]
    local = "127.0.0.1:" + port
    c = cc.Client(local, **mk)
    check(c.call("GetStatus", timeout=10).uptime_s >= 0, "mutual TLS call on 0.0.0.0")
    c.close()
    tls_fails(local, "mTLS: a client without a certificate", tls_ca=ca_pem, tls_name="localhost")
    tls_fails(local, "mTLS: a client certificate of another CA", tls_ca=ca_pem,
              tls_cert=stranger[1], tls_key=stranger[0], tls_name="localhost")
    # Reload: a new server certificate from a new CA; new connections get it.
    ca2 = make_ca(d0, "ca2")
    srv2 = make_cert(d0, "server2", ca2, True)
    for src, dst in ((srv2[1], cert_path), (srv2[0], key_path)):
        with open(src, "rb") as f, open(dst, "wb") as g:
            g.write(f.read())
    kept = cc.Client(local, **mk)  # connected before the reload: stays up
    check(kept.call("GetStatus", timeout=10).uptime_s >= 0, "a connection before the reload")
    d.proc.send_signal(signal.SIGHUP)
    check(wait_log(d, "TLS certificate reloaded"), "TLS reload logged")
    new = dict(mk, tls_ca=ca2[1])
    c = cc.Client(local, **new)
    check(c.call("GetStatus", timeout=10).uptime_s >= 0, "new certificate served after SIGHUP")
    c.close()
    tls_fails(local, "the old CA no longer verifies the server", **mk)
    check(kept.call("GetStatus", timeout=10).uptime_s >= 0, "the earlier connection still works")
    kept.close()
    # A bad file on reload keeps the certificate in use.
    write(cert_path, "not a certificate\n", 0o644)
    d.proc.send_signal(signal.SIGHUP)
    check(wait_log(d, "TLS files not reloaded"), "bad certificate on reload logged")
    c = cc.Client(local, **new)
    check(c.call("GetStatus", timeout=10).uptime_s >= 0, "certificate kept after a bad reload")
    c.close()
    d.client = cc.Client(local, **new)
    check(d.stop() == 0, "mtls daemon exits 0")
    # Server-only TLS does not authenticate: a network address still needs insecure.
    run_bad_config("tls-net.toml", "[metrics]\nlisten = \"\"\n[daemon.tls]\ncert = \"%s\"\n"
                   "key = \"%s\"\n" % (srv[1], srv[0]), ["daemon.insecure"],
                   ["--listen", "0.0.0.0:0"])
    run_bad_config("tls-notpem.toml", "[metrics]\nlisten = \"\"\n[daemon.tls]\ncert = \"%s\"\n"
                   "key = \"%s\"\n" % (srv[0], srv[0]), ["daemon.tls.cert", "no PEM certificate"])


# ------------------------------------------------------------------ unix socket

def test_unix_socket():
    sock = os.path.join(TMP, "cuzk.sock")
    d = Daemon("unix", CIRCUITS + "[metrics]\nlisten = \"\"\n[daemon]\nsocket_mode = \"0660\"\n",
               ["--listen", "unix:" + sock])
    check(d.addr == "unix:" + sock, "serving on the socket: %s" % d.addr)
    check(stat.S_ISSOCK(os.stat(sock).st_mode) and stat.S_IMODE(os.stat(sock).st_mode) == 0o660,
          "socket mode 0660: %o" % stat.S_IMODE(os.stat(sock).st_mode))
    r = d.call("Prove", circuit_id="bn-mul", witnesses=[W["bn128/multiplier"]])
    check(r.state == COMPLETED, "Prove over the unix socket")
    # A second daemon on the live socket refuses to start; the first stays reachable.
    p = subprocess.run([dt.DAEMON, "--config", d.path, "--listen", "unix:" + sock],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "another process serves on that socket" in p.stderr,
          "second daemon refused: rc=%d %s" % (p.returncode, p.stderr[-300:]))
    c = cc.Client("unix:" + sock)
    check(c.call("GetStatus", timeout=10).uptime_s >= 0, "the first daemon still answers")
    c.close()
    check(d.stop() == 0, "unix daemon exits 0")
    # A stale socket file (nobody accepts on it) is replaced; the default mode is 0600.
    s = socket.socket(socket.AF_UNIX)
    if os.path.exists(sock):
        os.unlink(sock)
    s.bind(sock)
    s.close()
    check(os.path.exists(sock), "stale socket file in place")
    d = Daemon("unix2", CIRCUITS + "[metrics]\nlisten = \"\"\n", ["--listen", "unix:" + sock])
    check(stat.S_IMODE(os.stat(sock).st_mode) == 0o600, "default socket mode 0600: %o" %
          stat.S_IMODE(os.stat(sock).st_mode))
    check(d.call("GetStatus").uptime_s >= 0, "a stale socket is replaced")
    check(any("removing stale unix socket" in l for l in d.lines), "stale socket logged")
    check(d.stop() == 0, "unix2 daemon exits 0")
    # Tokens over the unix socket work like over TCP.
    tf = write(os.path.join(TMP, "tokens-unix"), tokens_text(["read"]))
    d = Daemon("unix3", "[metrics]\nlisten = \"\"\n[daemon.auth]\ntokens_file = \"%s\"\n" % tf,
               ["--listen", "unix:" + sock], client_kw={"token": TOK["read"]})
    check(d.call("GetStatus").uptime_s >= 0, "token over the unix socket")
    c = cc.Client(d.addr)
    expect_error(lambda: c.call("GetStatus", timeout=10), SC.UNAUTHENTICATED, "",
                 "no token over the unix socket")
    c.close()
    check(d.stop() == 0, "unix3 daemon exits 0")


def test_client_cli():
    """scripts/cuzk-client.py's and cuzk-bench's --token-file and --unix options (--tls-* build
    the same Client as test_tls's)."""
    sock = os.path.join(TMP, "cli.sock")
    tf = write(os.path.join(TMP, "tokens-cli"), tokens_text(["prove"]))
    tokfile = write(os.path.join(TMP, "prove.token"), TOK["prove"] + "\n")
    d = Daemon("cli", CIRCUITS + "[metrics]\nlisten = \"\"\n[daemon.auth]\ntokens_file = \"%s\"\n"
               % tf, ["--listen", "unix:" + sock], client_kw={"token": TOK["prove"]})
    cli = os.path.join(dt.ROOT, "scripts/cuzk-client.py")
    out = os.path.join(TMP, "cli-out")
    r = subprocess.run(["/usr/bin/python3", cli, "--unix", sock, "--token-file", tokfile, "prove",
                        "bn-mul", os.path.join(dt.FIX, "bn128/multiplier.wtns"), "--out", out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and os.path.exists(os.path.join(out, "proof.json")),
          "cuzk-client --unix --token-file prove: %s %s" % (r.stdout[-200:], r.stderr[-300:]))
    r = subprocess.run(["/usr/bin/python3", cli, "--unix", sock, "status"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 2 and "UNAUTHENTICATED" in r.stderr, "cuzk-client without a token: %s"
          % r.stderr[-200:])
    bench = os.path.join(os.path.dirname(os.path.abspath(dt.DAEMON)), "cuzk-bench")
    r = subprocess.run(["/usr/bin/python3", bench, "--unix", sock, "--token-file", tokfile,
                        "single", "--circuit", "bn-mul", "--witness",
                        os.path.join(dt.FIX, "bn128/multiplier.wtns")],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "cuzk-bench --unix --token-file single: %s %s" %
          (r.stdout[-300:], r.stderr[-300:]))
    check(d.stop() == 0, "cli daemon exits 0")


TESTS = ["tokens", "tokens_config", "token_caps", "tls", "unix_socket", "client_cli"]

if __name__ == "__main__":
    t0 = time.time()
    try:
        for name in sys.argv[2:] or TESTS:
            globals()["test_" + name]()
    finally:
        for p in dt.DAEMONS:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    print("daemon_security: %d checks, %d failed (%.1fs)" % (dt.checks, dt.failures,
                                                          time.time() - t0))
    sys.exit(1 if dt.failures else 0)
