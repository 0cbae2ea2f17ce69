"""COMMAND INFO against Redis 7.0.15: for every command Basalt has (and Redis 7.0 knows),
the name, arity, flags (in order), first/last/step keys and ACL categories (in order)
must be Redis's. Clients and proxies choose routing, retries and read-only replicas by
these fields. (Key specs are Basalt's simple range form: not compared.)

Needs redis-server (see conftest.pair_of_servers); skipped without one.
"""

import socket


class Conn:
    """A minimal RESP client that parses nested replies (maps as flat lists)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(1 << 16)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in b"+-":
            return rest.decode()
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 16)
            value, self.buf = self.buf[:n], self.buf[n + 2:]
            return value.decode()
        if kind in b"*~":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        if kind == b"%":
            return [self._read() for _ in range(2 * int(rest))]
        raise ValueError(line)

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self._read()


def test_command_info_matches_redis(pair_of_servers):
    basalt_srv, redis_srv = pair_of_servers
    basalt, real = Conn(basalt_srv.port), Conn(redis_srv.port)
    names = sorted(basalt.cmd("COMMAND", "LIST"))
    compared, differences = 0, []
    for name in names:
        ours = basalt.cmd("COMMAND", "INFO", name)[0]
        theirs = real.cmd("COMMAND", "INFO", name)[0]
        if theirs is None:
            continue  # Redis 7.2 additions Basalt accepts (CLIENT NO-TOUCH, SETINFO)
        compared += 1
        if ours[:7] != theirs[:7]:
            differences.append(f"{name}:\n  basalt {ours[:7]}\n  redis  {theirs[:7]}")
    assert compared > 200, f"only {compared} commands compared"
    assert not differences, "\n".join(differences)
