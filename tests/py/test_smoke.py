"""redis-py smoke tests: a real client library talking to the server."""

import time

import pytest
import redis


# --- connection -------------------------------------------------------------

def test_ping_and_echo(r):
    assert r.ping() is True
    assert r.echo("hello") == b"hello"
    assert r.echo(b"a\x00\r\nb") == b"a\x00\r\nb"


def test_client_id_and_name(rd):
    cid = rd.client_id()
    assert isinstance(cid, int) and cid > 0
    assert rd.client_getname() is None
    assert rd.client_setname("smoke-client") is True
    assert rd.client_getname() == "smoke-client"
    info = rd.client_info()
    assert info["id"] == cid
    assert info["name"] == "smoke-client"
    # client_list() parses every field as a string.
    assert any(c["id"] == str(cid) for c in rd.client_list())


def test_select_isolates_databases(shared_target, prefix):
    db0 = shared_target.client(decode_responses=True)
    db1 = redis.Redis(host=shared_target.host, port=shared_target.port, db=1,
                      decode_responses=True, socket_timeout=5)
    k = prefix + "k"
    db1.set(k, "one")
    assert db0.get(k) is None
    assert db1.get(k) == "one"
    db1.delete(k)
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        db0.execute_command("SELECT", 16)


def test_protocol_3_client(shared_target, prefix):
    c = shared_target.client(protocol=3, decode_responses=True)
    hello = c.execute_command("HELLO", 3)
    assert hello["proto"] == 3
    assert hello["mode"] == "standalone"
    assert c.get(prefix + "missing") is None
    c.set(prefix + "f", "1.5")
    assert c.incrbyfloat(prefix + "f", 1) == 2.5
    assert c.config_get("databases") == {"databases": "16"}


def test_auth_without_password_configured(r):
    with pytest.raises(redis.exceptions.AuthenticationError):
        r.execute_command("AUTH", "nopass-configured")
    assert r.ping()


def test_requirepass(spawn, prefix):
    t = spawn("--requirepass", "secret")
    anon = t.client()
    with pytest.raises(redis.exceptions.AuthenticationError):
        anon.get(prefix + "k")
    with pytest.raises(redis.exceptions.AuthenticationError):
        t.client(password="wrong").ping()
    ok = t.client(password="secret", decode_responses=True)
    assert ok.set(prefix + "k", "v")
    assert ok.get(prefix + "k") == "v"


# --- strings ----------------------------------------------------------------

def test_set_get_decode_responses(rd, prefix):
    k = prefix + "k"
    assert rd.get(k) is None
    assert rd.set(k, "héllo") is True
    assert rd.get(k) == "héllo"
    assert rd.strlen(k) == len("héllo".encode())


def test_set_options(rd, prefix):
    k = prefix + "k"
    assert rd.set(k, "1", xx=True) is None
    assert rd.set(k, "1", nx=True) is True
    assert rd.set(k, "2", nx=True) is None
    assert rd.set(k, "3", ex=100) is True
    assert 99 <= rd.ttl(k) <= 100
    assert rd.set(k, "4", keepttl=True) is True
    assert rd.ttl(k) > 0
    assert rd.set(k, "5", get=True) == "4"
    assert rd.ttl(k) == -1
    assert rd.set(k, "6", px=50000) is True
    assert 48000 <= rd.pttl(k) <= 50000
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        rd.execute_command("SET", k, "v", "NX", "XX")
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'set' command"):
        rd.set(k, "v", ex=0)


def test_mset_mget_msetnx(rd, prefix):
    a, b, c = prefix + "a", prefix + "b", prefix + "c"
    assert rd.mset({a: "1", b: "2"}) is True
    assert rd.mget(a, b, c) == ["1", "2", None]
    assert rd.msetnx({b: "x", c: "y"}) is False
    assert rd.get(c) is None
    assert rd.msetnx({c: "y", prefix + "d": "z"}) is True


def test_counters(rd, prefix):
    k = prefix + "n"
    assert rd.incr(k) == 1
    assert rd.incrby(k, 10) == 11
    assert rd.decr(k) == 10
    assert rd.decrby(k, 4) == 6
    assert rd.incrbyfloat(k, 0.5) == 6.5
    assert rd.get(k) == "6.5"
    f = prefix + "f"
    rd.set(f, "10.5")
    assert rd.incrbyfloat(f, 0.1) == pytest.approx(10.6)
    assert rd.get(f) == "10.6"
    rd.set(k, "9223372036854775807")
    with pytest.raises(redis.ResponseError, match="increment or decrement would overflow"):
        rd.incr(k)
    rd.set(k, "abc")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        rd.incr(k)


def test_append_ranges(rd, prefix):
    k = prefix + "s"
    assert rd.append(k, "Hello") == 5
    assert rd.append(k, " World") == 11
    assert rd.getrange(k, 0, 4) == "Hello"
    assert rd.getrange(k, -5, -1) == "World"
    assert rd.setrange(k, 6, "Redis") == 11
    assert rd.get(k) == "Hello Redis"
    z = prefix + "z"
    assert rd.setrange(z, 3, "x") == 4
    assert rd.get(z) == "\x00\x00\x00x"


def test_bits(r, prefix):
    k = prefix + "b"
    assert r.setbit(k, 7, 1) == 0
    assert r.getbit(k, 7) == 1
    assert r.get(k) == b"\x01"
    r.set(k, "foobar")
    assert r.bitcount(k) == 26
    assert r.bitcount(k, 1, 1) == 6
    assert r.bitpos(k, 1) == 1
    r.set(prefix + "x", b"\xf0")
    r.set(prefix + "y", b"\x0f")
    assert r.bitop("OR", prefix + "d", prefix + "x", prefix + "y") == 1
    assert r.get(prefix + "d") == b"\xff"


def test_getex_getdel_getset(rd, prefix):
    k = prefix + "k"
    rd.set(k, "v")
    assert rd.getex(k, ex=100) == "v"
    assert rd.ttl(k) > 0
    assert rd.getex(k, persist=True) == "v"
    assert rd.ttl(k) == -1
    assert rd.getset(k, "w") == "v"
    assert rd.getdel(k) == "w"
    assert rd.exists(k) == 0


def test_lcs(rd, prefix):
    a, b = prefix + "a", prefix + "b"
    rd.mset({a: "ohmytext", b: "mynewtext"})
    assert rd.lcs(a, b) == "mytext"
    assert rd.lcs(a, b, len=True) == 6


# --- keys -------------------------------------------------------------------

def test_exists_type_del_unlink(rd, prefix):
    a, b = prefix + "a", prefix + "b"
    rd.mset({a: "1", b: "2"})
    assert rd.exists(a, a, prefix + "none") == 2
    assert rd.type(a) == "string"
    assert rd.type(prefix + "none") == "none"
    assert rd.delete(a, prefix + "none") == 1
    assert rd.unlink(b) == 1


def test_expire_ttl_persist(rd, prefix):
    k = prefix + "k"
    assert rd.expire(k, 10) is False
    rd.set(k, "v")
    assert rd.ttl(k) == -1
    assert rd.expire(k, 100) is True
    assert 99 <= rd.ttl(k) <= 100
    assert rd.expire(k, 50, gt=True) is False
    assert rd.expire(k, 50, lt=True) is True
    assert rd.persist(k) is True
    assert rd.ttl(k) == -1
    assert rd.ttl(prefix + "none") == -2


def test_key_expires(rd, prefix):
    k = prefix + "k"
    rd.set(k, "v", px=100)
    deadline = time.monotonic() + 3
    while rd.get(k) is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert rd.get(k) is None
    assert rd.exists(k) == 0


def test_scan_iter_and_keys(rd, prefix):
    want = {f"{prefix}{i}" for i in range(250)}
    with rd.pipeline(transaction=False) as p:
        for k in want:
            p.set(k, "v")
        p.execute()
    assert set(rd.scan_iter(match=prefix + "*", count=20)) == want
    assert set(rd.scan_iter(match=prefix + "*", _type="string")) == want
    assert sorted(rd.keys(prefix + "1?")) == sorted(f"{prefix}{i}" for i in range(10, 20))


def test_rename_copy_move(rd, prefix):
    a, b, c = prefix + "a", prefix + "b", prefix + "c"
    rd.set(a, "v")
    assert rd.rename(a, b) is True
    with pytest.raises(redis.ResponseError, match="no such key"):
        rd.rename(a, c)
    assert rd.renamenx(b, a) is True
    assert rd.copy(a, c) is True
    assert rd.copy(a, c) is False
    assert rd.copy(a, c, replace=True) is True
    assert rd.move(c, 1) is True
    assert rd.exists(c) == 0


def test_object_encoding(rd, prefix):
    rd.set(prefix + "i", "12345")
    rd.set(prefix + "e", "hello")
    rd.set(prefix + "r", "x" * 100)
    assert rd.object("encoding", prefix + "i") == "int"
    assert rd.object("encoding", prefix + "e") == "embstr"
    assert rd.object("encoding", prefix + "r") == "raw"


def test_flushdb_dbsize_randomkey(own_target):
    c = own_target.client(decode_responses=True)
    assert c.dbsize() == 0
    assert c.randomkey() is None
    c.mset({"a": "1", "b": "2"})
    assert c.dbsize() == 2
    assert c.randomkey() in ("a", "b")
    assert c.flushdb() is True
    assert c.dbsize() == 0


# --- server -----------------------------------------------------------------

def test_info(rd):
    info = rd.info()
    for field in ("redis_version", "connected_clients", "used_memory", "role"):
        assert field in info
    assert info["role"] == "master"
    assert rd.ping()
    assert "cmdstat_ping" in rd.info("commandstats")
    assert "used_cpu_sys" in rd.info("cpu")


def test_config_get(rd, shared_target):
    cfg = rd.config_get("port")
    assert cfg == {"port": str(shared_target.port)}
    many = rd.config_get("*max*-len")
    assert "proto-max-bulk-len" in many


def test_config_set(own_target):
    c = own_target.client(decode_responses=True)
    assert c.config_set("maxmemory", "100mb") is True
    assert c.config_get("maxmemory") == {"maxmemory": "104857600"}
    with pytest.raises(redis.ResponseError, match="argument must be a memory value"):
        c.config_set("maxmemory", "lots")
    c.config_set("maxmemory", "0")


def test_time_and_command(rd):
    secs, micros = rd.time()
    assert abs(secs - time.time()) < 5
    assert 0 <= micros < 1_000_000
    assert rd.command_count() > 0
    cmds = rd.command()
    assert cmds["get"]["arity"] == 2
    assert cmds["set"]["arity"] == -3


def test_pipeline_many_commands(r, prefix):
    k = prefix + "n"
    with r.pipeline(transaction=False) as p:
        for _ in range(500):
            p.incr(k)
        p.get(k)
        res = p.execute()
    assert res[:500] == list(range(1, 501))
    assert res[500] == b"500"


def test_pipeline_with_errors(r, prefix):
    k = prefix + "s"
    with r.pipeline(transaction=False) as p:
        p.set(k, "text")
        p.incr(k)
        p.get(k)
        res = p.execute(raise_on_error=False)
    assert res[0] is True
    assert isinstance(res[1], redis.ResponseError)
    assert "not an integer" in str(res[1])
    assert res[2] == b"text"


def test_unknown_command_error(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("NOSUCHCOMMAND", "a", "b")
    assert str(e.value) == "unknown command 'NOSUCHCOMMAND', with args beginning with: 'a' 'b' "
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'get' command"):
        r.execute_command("GET")
    assert r.ping()
