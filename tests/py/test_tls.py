"""TLS for clients (issue 26, item 4): `tls-port` beside the plain port, redis-py with
`ssl=True`, redis-cli and redis-benchmark `--tls`, client certificates as
`tls-auth-clients` says, a certificate reloaded by CONFIG SET; replication over TLS
(`tls-replication yes`), Basalt and Redis on either side. Every test passes against
Redis 7.0.15 too (Debian's is built with TLS). Certificates are made here with openssl
(X.509 v3: rustls, like current OpenSSL setups, refuses v1 certificates).
"""

import os
import shutil
import subprocess
import time

import pytest
import redis

from conftest import _binary, _free_port

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="openssl not installed")


def _run(*args, cwd):
    subprocess.run([OPENSSL, *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _issue(d, name, ca, ext):
    _run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
         "-subj", f"/CN={name}", cwd=d)
    with open(os.path.join(d, f"{name}.cnf"), "w") as f:
        f.write(ext)
    _run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
         "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.cnf", cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("certs"))
    for ca in ("ca", "otherca"):
        _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key", "-out", f"{ca}.crt",
             "-days", "2", "-subj", f"/CN={ca}", cwd=d)
    server_ext = "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
    client_ext = "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
    _issue(d, "server", "ca", server_ext)
    _issue(d, "server2", "ca", server_ext)
    # Signed by the CA, for a name that is not the one replicas use (127.0.0.1).
    _issue(d, "elsewhere", "ca", "basicConstraints=CA:FALSE\nsubjectAltName=DNS:elsewhere.example\nextendedKeyUsage=serverAuth\n")
    _issue(d, "client", "ca", client_ext)
    _issue(d, "stranger", "otherca", client_ext)
    return lambda name: os.path.join(d, name)


class TlsServer:
    def __init__(self, certs, tmp_path, *extra, binary=None):
        binary = binary or _binary()
        self.port, self.tls_port = _free_port(), _free_port()
        # BASALT_SERVER_EXTRA: flags for every Basalt under test (the engine, in CI).
        if "redis-server" not in os.path.basename(binary):
            extra = (*extra, *os.environ.get("BASALT_SERVER_EXTRA", "").split())
        # A folder of its own (replicas write their master's snapshot there).
        tmp_path = os.path.join(str(tmp_path), f"server-{self.port}")
        os.makedirs(tmp_path)
        self.dir = tmp_path
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", "",
                "--tls-port", str(self.tls_port), "--tls-cert-file", certs("server.crt"),
                "--tls-key-file", certs("server.key"), "--tls-ca-cert-file", certs("ca.crt"), *extra]
        self.log = open(os.path.join(str(tmp_path), "tls-server.log"), "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port, socket_timeout=2).ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        self.stop()
        pytest.fail("the server did not start")

    def client(self, certs, cert="client", **kw):
        extra = {}
        if cert:
            extra = {"ssl_certfile": certs(f"{cert}.crt"), "ssl_keyfile": certs(f"{cert}.key")}
        return redis.Redis(port=self.tls_port, ssl=True, ssl_ca_certs=certs("ca.crt"), socket_timeout=10,
                           **extra, **kw)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


@pytest.fixture
def tls_server(certs, tmp_path):
    servers = []

    def make(*extra, binary=None):
        s = TlsServer(certs, tmp_path, *extra, binary=binary)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


def test_clients_speak_tls_on_the_tls_port_and_plain_on_the_other(certs, tls_server):
    s = tls_server()
    c = s.client(certs)
    assert c.ping()
    big = b"x" * 300_000  # many TLS records each way
    assert c.set("big", big)
    assert c.get("big") == big
    pipe = c.pipeline(transaction=False)
    for i in range(2000):
        pipe.incr("n")
    assert pipe.execute()[-1] == 2000
    plain = redis.Redis(port=s.port)
    assert plain.get("n") == b"2000", "one keyspace behind both ports"
    assert c.config_get("tls-port")["tls-port"] == str(s.tls_port)


def test_client_certificates_follow_tls_auth_clients(certs, tls_server):
    s = tls_server()
    for cert in (None, "stranger"):
        with pytest.raises(redis.ConnectionError):
            s.client(certs, cert=cert).ping()
    optional = tls_server("--tls-auth-clients", "optional")
    assert optional.client(certs, cert=None).ping()
    with pytest.raises(redis.ConnectionError):
        optional.client(certs, cert="stranger").ping()
    off = tls_server("--tls-auth-clients", "no")
    assert off.client(certs, cert=None).ping()


def test_config_set_reloads_the_certificate_for_new_connections(certs, tls_server):
    s = tls_server()
    plain = redis.Redis(port=s.port)
    before = s.client(certs)
    assert before.ping()
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        plain.config_set("tls-cert-file", certs("missing.crt"))
    assert plain.config_get("tls-cert-file")["tls-cert-file"] == certs("server.crt"), "a refused CONFIG SET changes nothing"
    assert plain.execute_command("CONFIG", "SET", "tls-cert-file", certs("server2.crt"),
                                 "tls-key-file", certs("server2.key")) == b"OK"
    after = s.client(certs)
    assert after.ping()
    conn = after.connection_pool.get_connection("_")
    try:
        subject = dict(x[0] for x in conn._sock.getpeercert()["subject"])
        assert subject["commonName"] == "server2"
    finally:
        after.connection_pool.release(conn)
    assert before.ping(), "connections made before keep their session"


def test_redis_cli_and_redis_benchmark_over_tls(certs, tls_server):
    cli, bench = shutil.which("redis-cli"), shutil.which("redis-benchmark")
    if not cli or not bench:
        pytest.skip("redis-tools not installed")
    s = tls_server()
    tls = ["--tls", "--cacert", certs("ca.crt"), "--cert", certs("client.crt"), "--key", certs("client.key")]
    out = subprocess.run([cli, "-p", str(s.tls_port), *tls, "set", "k", "v"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "OK"
    out = subprocess.run([cli, "-p", str(s.tls_port), "--tls", "--cacert", certs("ca.crt"), "ping"],
                         capture_output=True, text=True, timeout=30)
    # No client certificate: refused, and said (Redis's words depend on timing: closed or reset).
    assert out.returncode != 0 and "Error:" in out.stdout + out.stderr, out.stdout + out.stderr
    out = subprocess.run([bench, "-p", str(s.tls_port), *tls, "-t", "set,get", "-n", "5000", "-c", "10", "-P", "8",
                          "-q"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.count("requests per second") == 2, out.stdout + out.stderr


def test_a_bad_certificate_stops_the_start(certs, tmp_path):
    port, tls_port = _free_port(), _free_port()
    proc = subprocess.run([_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", "",
                           "--tls-port", str(tls_port), "--tls-cert-file", certs("missing.crt"),
                           "--tls-key-file", certs("server.key"), "--tls-ca-cert-file", certs("ca.crt")],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0


def test_basalt_bench_over_tls(certs, tls_server):
    """basalt-bench's redis-benchmark and memtier modes with their TLS flags."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bench = os.environ.get("BASALT_BENCH_BIN", os.path.join(repo, "target", "debug", "basalt-bench"))
    if not os.access(bench, os.X_OK):
        pytest.skip(f"{bench} not built")
    s = tls_server()
    tls = ["--tls", "--cacert", certs("ca.crt"), "--cert", certs("client.crt"), "--key", certs("client.key")]
    out = subprocess.run([bench, "-p", str(s.tls_port), *tls, "-t", "set,get", "-n", "4000", "-c", "8", "-P", "4",
                          "-d", "20000", "-q"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.count("requests per second") == 2, out.stdout + out.stderr
    out = subprocess.run([bench, "memtier", "-s", "127.0.0.1", "-p", str(s.tls_port), *tls, "-n", "500", "-c", "4",
                          "-t", "2", "--hide-histogram"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Totals" in out.stdout, out.stdout + out.stderr
    # Without a client certificate the server refuses, and the run says so.
    out = subprocess.run([bench, "-p", str(s.tls_port), "--tls", "--cacert", certs("ca.crt"), "-t", "ping",
                          "-n", "10", "-q"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "CertificateRequired" in out.stdout + out.stderr, out.stdout + out.stderr
    assert redis.Redis(port=s.port).dbsize() > 0


def _redis_or_skip():
    path = os.environ.get("REDIS_SERVER_BIN", "").strip() or shutil.which("redis-server")
    if not path:
        pytest.skip("needs redis-server")
    return path


def _replication_up(master, replica, timeout=20):
    m, r = redis.Redis(port=master.port, socket_timeout=10), redis.Redis(port=replica.port, socket_timeout=10)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = r.info("replication")
        if info.get("master_link_status") == "up" and info.get("slave_repl_offset") == m.info("replication")["master_repl_offset"]:
            return m, r
        time.sleep(0.05)
    pytest.fail(f"no replication over TLS within {timeout} s: {r.info('replication')}")


# The replica shows the client certificate (tls-client-*), the master asks for one
# (tls-auth-clients yes, the default).
TLS_REPLICA = lambda certs: ("--tls-replication", "yes", "--tls-client-cert-file", certs("client.crt"),
                             "--tls-client-key-file", certs("client.key"))


@pytest.mark.parametrize("master_kind", ["same", "redis"])
def test_a_replica_follows_its_master_over_tls(certs, tls_server, master_kind):
    """`tls-replication yes`: the link is TLS to the master's TLS port, the stream
    flows, and the replica announces its own TLS port."""
    master = tls_server(binary=_redis_or_skip() if master_kind == "redis" else None)
    replica = tls_server(*TLS_REPLICA(certs))
    admin = master.client(certs)
    admin.set("before", "1")
    r = redis.Redis(port=replica.port, socket_timeout=10)
    assert r.replicaof("127.0.0.1", master.tls_port)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and r.info("replication").get("master_link_status") != "up":
        time.sleep(0.05)
    for i in range(500):
        admin.rpush("list", i)
    admin.set("big", b"x" * 200_000)
    assert admin.execute_command("WAIT", 1, 10000) == 1
    assert r.get("before") == b"1" and r.llen("list") == 500 and len(r.get("big")) == 200_000
    slave = admin.info("replication")["slave0"]
    assert int(slave["port"]) == replica.tls_port


def test_a_redis_replica_follows_a_master_over_tls(certs, tls_server):
    master = tls_server()
    replica = tls_server(*TLS_REPLICA(certs), binary=_redis_or_skip())
    redis.Redis(port=master.port).set("k", "v")
    assert redis.Redis(port=replica.port).replicaof("127.0.0.1", master.tls_port)
    m, r = _replication_up(master, replica)
    m.set("after", "2")
    assert m.execute_command("WAIT", 1, 10000) == 1
    assert r.get("k") == b"v" and r.get("after") == b"2"


def test_a_master_whose_certificate_no_known_ca_signed_is_refused(certs, tls_server):
    """The replica checks the master's certificate against its CAs (here another CA's
    only), and keeps trying; nothing of the master reaches it."""
    master = tls_server()
    redis.Redis(port=master.port).set("secret", "1")
    replica = tls_server(*TLS_REPLICA(certs), "--tls-ca-cert-file", certs("otherca.crt"))
    r = redis.Redis(port=replica.port, socket_timeout=10)
    assert r.replicaof("127.0.0.1", master.tls_port)
    time.sleep(2.5)
    assert r.info("replication")["master_link_status"] == "down"
    assert r.get("secret") is None
    with open(os.path.join(replica.dir, "tls-server.log"), "rb") as f:
        log = f.read()
    assert b"certificate" in log.lower(), log[-2000:]


def test_a_replica_checks_the_masters_ca_not_the_name_it_was_given(certs, tls_server):
    """As Redis 7.0's replica: the master's certificate must be signed by a known CA,
    but need not name the address REPLICAOF gave (Sentinel hands out IP addresses)."""
    master = tls_server("--tls-cert-file", certs("elsewhere.crt"), "--tls-key-file", certs("elsewhere.key"))
    redis.Redis(port=master.port).set("k", "v")
    replica = tls_server(*TLS_REPLICA(certs))
    assert redis.Redis(port=replica.port).replicaof("127.0.0.1", master.tls_port)
    m, r = _replication_up(master, replica)
    assert r.get("k") == b"v"
