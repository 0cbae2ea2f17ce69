"""TLS for clients (issue 26, item 4): `tls-port` beside the plain port, redis-py with
`ssl=True`, redis-cli and redis-benchmark `--tls`, client certificates as
`tls-auth-clients` says, a certificate reloaded by CONFIG SET. Every test passes against
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
    _issue(d, "client", "ca", client_ext)
    _issue(d, "stranger", "otherca", client_ext)
    return lambda name: os.path.join(d, name)


class TlsServer:
    def __init__(self, certs, tmp_path, *extra):
        self.port, self.tls_port = _free_port(), _free_port()
        # BASALT_SERVER_EXTRA: flags for every Basalt under test (the engine, in CI).
        if "redis-server" not in os.path.basename(_binary()):
            extra = (*extra, *os.environ.get("BASALT_SERVER_EXTRA", "").split())
        args = [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", "",
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

    def make(*extra):
        s = TlsServer(certs, tmp_path, *extra)
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
