#!/usr/bin/env python3
"""What TLS costs per request, Basalt against Redis 7.0.15 in the same run (issue 26).

Makes a CA, a server and a client certificate with openssl (X.509 v3), starts Redis and
Basalt each with a plain port and a TLS port, and runs redis-benchmark against each
server's plain and TLS ports, the four runs interleaved, for several rounds. The figure
is the server's CPU time (user + system, /proc/<pid>/stat) per request: it does not
depend on how much CPU the load generator takes on a small machine. Prints per workload
the medians (us per request) and the ratios Basalt/Redis with TLS, and each server's
TLS cost (with TLS / plain).

Usage: scripts/bench-tls.py [--basalt-server target/release/basalt-server]
       [--redis-server redis-server] [--requests 200000] [--rounds 3] [--threads 1]
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(d):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=bench-ca", cwd=d)
    for name, ext in (("server", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/CN={name}", cwd=d)
        with open(os.path.join(d, f"{name}.cnf"), "w") as f:
            f.write("basicConstraints=CA:FALSE\n" + ext)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.cnf", cwd=d)


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def start(binary, certs, workdir, extra):
    port, tls_port = free_port(), free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir,
            "--tls-port", str(tls_port), "--tls-cert-file", f"{certs}/server.crt",
            "--tls-key-file", f"{certs}/server.key", "--tls-ca-cert-file", f"{certs}/ca.crt", *extra]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port, tls_port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit(f"{binary} did not start")


def bench(port, tls, certs, test, pipe, n, clients):
    args = ["redis-benchmark", "-p", str(port), "-t", test, "-n", str(n), "-c", str(clients), "-P", str(pipe),
            "-r", "100000", "-q"]
    if tls:
        args += ["--tls", "--cacert", f"{certs}/ca.crt", "--cert", f"{certs}/client.crt", "--key", f"{certs}/client.key"]
    subprocess.run(args, check=True, capture_output=True, timeout=600)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt-server", default=os.path.join(REPO, "target", "release", "basalt-server"))
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1, help="Basalt's event loops")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-tls-")
    make_certs(tmp)
    servers = {}
    try:
        for name, binary, extra in (("redis", a.redis_server, ["--appendonly", "no"]),
                                    ("basalt", a.basalt_server, ["--threads", str(a.threads)])):
            wd = os.path.join(tmp, name)
            os.mkdir(wd)
            servers[name] = start(binary, tmp, wd, extra)
        workloads = [("set", 1), ("get", 1), ("set", 16), ("get", 16)]
        results = {}  # (server, tls, test, pipe) -> [us per request]
        for r in range(a.rounds):
            for test, pipe in workloads:
                for tls in (False, True):
                    for name in ("redis", "basalt") if r % 2 == 0 else ("basalt", "redis"):
                        proc, port, tls_port = servers[name]
                        before = cpu_s(proc.pid)
                        bench(tls_port if tls else port, tls, tmp, test, pipe, a.requests, a.clients)
                        used = cpu_s(proc.pid) - before
                        results.setdefault((name, tls, test, pipe), []).append(used / a.requests * 1e6)
        print(f"Server CPU per request (us), medians of {a.rounds} rounds, {a.requests} requests, "
              f"-c {a.clients}, Basalt --threads {a.threads}")
        print("| workload | Redis plain | Redis TLS | Basalt plain | Basalt TLS | Basalt/Redis TLS | TLS cost Redis | TLS cost Basalt |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for test, pipe in workloads:
            m = {(s, t): statistics.median(results[(s, t, test, pipe)]) for s in ("redis", "basalt") for t in (False, True)}
            label = test.upper() + (f" -P {pipe}" if pipe > 1 else "")
            print(f"| {label} | {m[('redis', False)]:.2f} | {m[('redis', True)]:.2f} | {m[('basalt', False)]:.2f} | "
                  f"{m[('basalt', True)]:.2f} | {m[('basalt', True)] / m[('redis', True)]:.2f} | "
                  f"{m[('redis', True)] / m[('redis', False)]:.2f}x | {m[('basalt', True)] / m[('basalt', False)]:.2f}x |")
    finally:
        for proc, _, _ in servers.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
