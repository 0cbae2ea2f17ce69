#!/usr/bin/env python3
"""Stress of connection balancing (not a CI test): a two-loop server, 24 clients that
pipeline INCRs on their own counters, reconnect now and then, and check that every
reply comes in order, while `loop-spread-busy` flips between 0 (new connections land
on both loops) and 85 (the second loop hands its connections to the first), so that
connections move between loops under load again and again. Bounded in time; starts
and stops its own server on loopback.

Usage: python3 scripts/stress-balance.py [--server-bin PATH] [--seconds 15] [--io-engine uring|epoll]
"""
import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def encode(*args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.lines = self.sock.makefile("rb")

    def send(self, data):
        self.sock.sendall(data)

    def line(self):
        return self.lines.readline()

    def close(self):
        self.lines.close()
        self.sock.close()


def worker(port, index, deadline, results):
    key = b"stress:%d" % index
    c = Client(port)
    c.send(encode(b"DEL", key))
    c.line()
    expect, sent = 0, 0
    rng = random.Random(index)
    while time.time() < deadline:
        burst = rng.randint(1, 20)
        c.send(encode(b"INCR", key) * burst)
        for _ in range(burst):
            expect += 1
            got = c.line()
            if got != b":%d\r\n" % expect:
                results.append(f"client {index}: expected :{expect}, got {got!r}")
                c.close()
                return
        sent += burst
        time.sleep(rng.random() * 0.004)
        if rng.random() < 0.02:
            c.close()
            c = Client(port)
    c.close()
    results.append(sent)


def config_set(port, value):
    c = Client(port)
    c.send(encode(b"CONFIG", b"SET", b"loop-spread-busy", value))
    reply = c.line()
    c.close()
    return reply


def info_server(port):
    c = Client(port)
    c.send(encode(b"INFO", b"server"))
    size = int(c.line()[1:])
    body = c.lines.read(size + 2)
    c.close()
    return body.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server-bin", default=os.path.join(REPO, "target/release/basalt-server"))
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--io-engine", default="uring")
    args = ap.parse_args()
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="stress-balance-")
    log = open(os.path.join(workdir, "server.log"), "wb")
    server = subprocess.Popen(
        [args.server_bin, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir,
         "--threads", "2", "--io-engine", args.io_engine, "--loglevel", "verbose"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        deadline = time.time() + args.seconds
        results = []
        threads = [threading.Thread(target=worker, args=(port, i, deadline, results)) for i in range(24)]
        for t in threads:
            t.start()
        flips = 0
        while time.time() < deadline:
            reply = config_set(port, b"85" if flips % 2 else b"0")
            if reply != b"+OK\r\n":
                results.append(f"CONFIG SET answered {reply!r}")
            flips += 1
            time.sleep(0.3)
        for t in threads:
            t.join(timeout=30)
        failures = [r for r in results if isinstance(r, str)]
        commands = sum(r for r in results if isinstance(r, int))
        info = info_server(port)
        loops = [line for line in info.splitlines() if line.startswith("basalt_loop")]
        print(f"stress-balance ({args.io_engine}): {commands} INCRs checked, {flips} flips, "
              f"{len(failures)} failures; {'; '.join(loops)}")
        for f in failures[:5]:
            print("  " + f)
        if server.poll() is not None:
            print("server exited during the run")
            return 1
        return 1 if failures or len(results) != len(threads) else 0
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
