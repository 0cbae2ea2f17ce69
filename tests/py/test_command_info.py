"""COMMAND INFO against Redis 7.0.15: for every command and subcommand Basalt has (and
Redis 7.0 knows), the name, arity, flags (in order), first/last/step keys, ACL categories
(in order), tips and key specs must be Redis's. Clients and proxies choose routing,
retries and read-only replicas by these fields. The only difference allowed: Redis gives
a few key specs a `notes` text (its prose), which Basalt leaves out.

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


def without_notes(key_spec):
    """A key spec (a flat map) without Redis's `notes` entry."""
    pairs = list(zip(key_spec[::2], key_spec[1::2]))
    return [x for k, v in pairs if k != "notes" for x in (k, v)]


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
        # Subcommands by name: each server lists them in its own order.
        their_subs = {t[0]: t for t in theirs[9] or []}
        pairs = [(ours, theirs)] + [(o, their_subs.get(o[0])) for o in ours[9] or []]
        for o, t in pairs:
            if t is None:
                continue  # a subcommand Redis 7.0 does not have
            compared += 1
            t = t[:8] + [[without_notes(k) for k in t[8]]]
            if o[:9] != t:
                differences.append(f"{t[0]}:\n  basalt {o[:9]}\n  redis  {t}")
    assert compared > 200, f"only {compared} commands compared"
    assert not differences, "\n".join(differences)


def as_map(flat):
    return dict(zip(flat[::2], flat[1::2]))


def test_command_docs_match_redis(pair_of_servers):
    """COMMAND DOCS against Redis 7.0.15: since, group, doc flags, deprecation and the
    arguments (names, types, tokens, key spec indexes, flags, nesting: what redis-cli
    builds its hints from) must be Redis's, for every command and subcommand both have.
    Summaries are in Basalt's own words, the complexity is its big-O only, and Redis's
    history notes are left out: those three are not compared."""
    basalt_srv, redis_srv = pair_of_servers
    basalt, real = Conn(basalt_srv.port), Conn(redis_srv.port)
    ours_all, theirs_all = as_map(basalt.cmd("COMMAND", "DOCS")), as_map(real.cmd("COMMAND", "DOCS"))

    def flatten(docs, into):
        for name, doc in docs.items():
            d = as_map(doc)
            into[name] = d
            flatten(as_map(d.get("subcommands") or []), into)
        return into

    ours, theirs = flatten(ours_all, {}), flatten(theirs_all, {})
    compared, differences = 0, []
    for name, o in sorted(ours.items()):
        t = theirs.get(name)
        if t is None:
            continue
        compared += 1
        for field in ("since", "group", "doc_flags", "deprecated_since", "arguments"):
            if o.get(field) != t.get(field):
                differences.append(f"{name} {field}:\n  basalt {o.get(field)}\n  redis  {t.get(field)}")
        if t.get("complexity") and not o.get("complexity"):
            differences.append(f"{name}: no complexity")
    assert compared > 200, f"only {compared} commands compared"
    assert not differences, "\n".join(differences[:60])


GETKEYS_CASES = [
    ["set", "k", "v"], ["set", "k", "v", "GET", "ex", "5"], ["lmove", "a", "b", "left", "right"], ["get"],
    ["nosuch", "a"], ["ping"], ["ping", "x", "y"], ["eval", "return 1", "0"], ["eval", "return 1", "x"],
    ["eval", "return 1", "5", "a"], ["eval", "return 1", "2", "a", "b", "c"], ["sort", "k", "store", "d"],
    ["sort", "k", "by", "w*", "get", "#"], ["sort_ro", "k"], ["georadius", "k", "1", "2", "3", "m", "store", "a", "storedist", "b"],
    ["bitfield", "k", "get", "u8", "0"], ["bitfield", "k", "set", "u8", "0", "1"], ["bitfield_ro", "k", "get", "u8", "0"],
    ["mset", "a", "1", "b", "2"], ["zunionstore", "d", "2", "a", "b"], ["zunionstore", "d", "0", "a", "b"],
    ["lmpop", "2", "a", "b", "left"], ["fcall", "f", "1", "k", "x"], ["fcall", "f", "0"], ["spublish", "c", "m"],
    ["ssubscribe", "c"], ["publish", "c", "m"], ["pfcount", "a", "b"], ["pfmerge", "d", "a", "b"],
    ["geosearchstore", "d", "s", "fromlonlat", "1", "2", "byradius", "1", "m"], ["object", "encoding", "k"],
    ["blmpop", "0", "2", "a", "b", "left"], ["smove", "a", "b", "m"], ["del", "a", "b"], ["restore", "k", "0", "x"],
    ["bitop", "and", "d", "a", "b"], ["memory", "usage", "k"], ["client", "kill", "x"], ["function", "load", "x"],
    ["xadd", "k", "*", "f", "v"], ["xread", "count", "1", "streams", "a", "b", "0", "0"], ["xread", "streams", "a"],
    ["xread", "block", "0", "streams", "streams", "0"], ["xreadgroup", "group", "g", "c", "noack", "streams", "a", "b", ">", ">"],
    ["xreadgroup", "group", "streams", "c", "streams", "a", ">"], ["xinfo", "stream", "k"], ["xgroup", "create", "k", "g", "$"],
    ["xautoclaim", "k", "g", "c", "0", "0"], ["xsetid", "k", "1-1"],
    ["migrate", "h", "1", "k", "0", "0"], ["migrate", "h", "1", "k", "0", "0", "KEYS", "a"],
    ["migrate", "h", "1", "", "0", "0", "AUTH", "KEYS", "KEYS", "a", "b"], ["migrate", "h", "1", "", "0", "0", "AUTH2", "u", "KEYS", "a"],
    ["migrate", "h", "1", "", "0", "0", "COPY", "KEYS", "a"], ["migrate", "h", "1", "k", "0", "0", "KEYS"],
    ["restore-asking", "k", "0", "x"],
]


def test_command_getkeys_and_getkeysandflags_match_redis(pair_of_servers):
    """COMMAND GETKEYS and GETKEYSANDFLAGS against Redis 7.0.15: the keys, their flags
    (as the key specs say, or as the argument-dependent rules of SET, BITFIELD and
    SORT), and the errors, in their order."""
    basalt_srv, redis_srv = pair_of_servers
    basalt, real = Conn(basalt_srv.port), Conn(redis_srv.port)
    differences = []
    for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
        for case in GETKEYS_CASES:
            ours, theirs = basalt.cmd("COMMAND", sub, *case), real.cmd("COMMAND", sub, *case)
            if ours != theirs:
                differences.append(f"{sub} {case}:\n  basalt {ours}\n  redis  {theirs}")
    assert not differences, "\n".join(differences)


def test_help_texts_and_cluster_and_module_replies_match_redis(pair_of_servers):
    """Every container's HELP is Redis 7.0.15's text, line for line; the cluster
    commands answer as Redis without cluster mode; MODULE answers as a Redis with no
    module loaded and `enable-module-command no`; SCRIPT DEBUG NO is OK and a wrong mode
    gets Redis's error."""
    basalt_srv, redis_srv = pair_of_servers
    basalt, real = Conn(basalt_srv.port), Conn(redis_srv.port)
    containers = sorted(n.split("|")[0] for n in basalt.cmd("COMMAND", "LIST") if n.endswith("|help"))
    assert len(containers) >= 15, containers
    cases = [[c, "HELP"] for c in containers] + [
        ["CLUSTER", "INFO"], ["CLUSTER", "NODES"], ["CLUSTER", "SLOTS"], ["CLUSTER", "KEYSLOT", "k"],
        ["CLUSTER", "KEYSLOT"], ["CLUSTER", "NOSUCH"], ["READONLY"], ["READWRITE"], ["ASKING"], ["READONLY", "x"],
        ["MODULE", "LIST"], ["MODULE", "LOAD", "/nonexistent.so"], ["MODULE", "LOADEX", "/x.so", "ARGS", "a"],
        ["MODULE", "UNLOAD", "x"], ["MODULE", "NOSUCH"], ["MODULE", "LOAD"],
        ["SCRIPT", "DEBUG", "NO"], ["SCRIPT", "DEBUG", "MAYBE"], ["SCRIPT", "DEBUG"],
        ["RESTORE-ASKING", "k", "0", "not-a-payload"],
    ]
    differences = []
    for case in cases:
        ours, theirs = basalt.cmd(*case), real.cmd(*case)
        if ours != theirs:
            differences.append(f"{' '.join(case)}:\n  basalt {ours}\n  redis  {theirs}")
    assert not differences, "\n".join(differences)
