"""Functions (FUNCTION LOAD ... and FCALL) as Redis 7.0.15 runs them, and their way
through snapshot files, the append-only log and replication, both ways with Redis.

The black-box tests pass against Redis too (BASALT_TEST_SERVER=/usr/bin/redis-server);
the interop tests start a Redis 7.0.15 beside the server (skipped without one).
FUNCTION LIST's order of libraries and functions is Redis's hash tables' (it differs
from run to run), so lists are compared as sets.
"""

import os
import shutil
import time

import pytest
import redis

from conftest import Server, _external

LIB = """#!lua name=mylib
redis.register_function('echo_keys', function(keys, args) return {keys[1], args[1]} end)
redis.register_function{function_name='reader', callback=function(keys, args) return redis.call('get', keys[1]) end,
                        flags={'no-writes'}, description='reads a key'}
redis.register_function('incr_by', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)
"""


def as_dict(flat):
    return dict(zip(flat[::2], flat[1::2]))


def libraries(c, *args):
    """FUNCTION LIST as {library: {function: (description, sorted flags)}}."""
    out = {}
    for lib in c.execute_command("FUNCTION", "LIST", *args):
        lib = as_dict(lib)
        out[lib[b"library_name"]] = {as_dict(f)[b"name"]: (as_dict(f)[b"description"], sorted(as_dict(f)[b"flags"]))
                                     for f in lib[b"functions"]}
    return out


@pytest.fixture
def c(own_target):
    c = own_target.client()
    c.function_flush()
    assert c.function_load(LIB) == b"mylib"
    yield c
    c.function_flush()
    c.close()


def test_functions_run_with_keys_and_arguments_as_parameters(c):
    assert c.fcall("echo_keys", 1, "k", "a") == [b"k", b"a"]
    assert c.fcall("incr_by", 1, "n", 5) == 5
    c.set("k", "v")
    assert c.fcall_ro("reader", 1, "k") == b"v"
    with pytest.raises(redis.ResponseError, match="^Can not execute a script with write flag using \\*_ro command.$"):
        c.fcall_ro("incr_by", 1, "n", 1)
    with pytest.raises(redis.ResponseError, match="^Function not found$"):
        c.fcall("nosuch", 0)
    with pytest.raises(redis.ResponseError, match="^Bad number of keys provided$"):
        c.execute_command("FCALL", "echo_keys", "x")
    with pytest.raises(redis.ResponseError, match="^Number of keys can't be greater than number of args$"):
        c.fcall("echo_keys", 3, "a")


def test_errors_name_the_function_and_the_line(c):
    c.function_load("#!lua name=bad\nredis.register_function('boom', function(k, a)\n  error('boom')\nend)\n"
                    "redis.register_function('globals', function(k, a) return KEYS end)")
    with pytest.raises(redis.ResponseError) as e:
        c.fcall("boom", 0)
    assert str(e.value) == "user_function:3: boom script: boom, on @user_function:3."
    with pytest.raises(redis.ResponseError) as e:
        c.fcall("globals", 0)
    assert str(e.value) == ("user_function:5: Script attempted to access nonexistent global variable 'KEYS' "
                            "script: globals, on @user_function:5.")


def test_loading_refuses_what_redis_refuses(c):
    cases = [
        ("redis.register_function('f', function() end)", "Missing library metadata"),
        ("#!lua\nx", "Library name was not given"),
        ("#!js name=js\nx", "Engine 'js' not found"),
        ("#!lua name=mylib\nx", "Library 'mylib' already exists"),
        ("#!lua name=other\nredis.register_function('reader', function() end)", "Function reader already exists"),
        ("#!lua name=empty\nlocal x = 1", "No functions registered"),
        ("#!lua name=calls\nredis.call('set', 'a', 'b')",
         "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"),
        ("#!lua name=flags\nredis.register_function{function_name='f', callback=function() end, flags={'bogus'}}",
         "Error registering functions: ERR unknown flag given"),
        ("#!lua name=syntax\nredis.register_function('f', function() end", "Error compiling function: user_function:2: ')' expected near '<eof>'"),
    ]
    for code, text in cases:
        with pytest.raises(redis.ResponseError) as e:
            c.function_load(code)
        assert str(e.value) == text, code
    assert list(libraries(c)) == [b"mylib"], "nothing was added"


def test_a_library_that_runs_too_long_at_load_is_stopped(c):
    started = time.monotonic()
    with pytest.raises(redis.ResponseError) as e:
        c.function_load("#!lua name=loop\nwhile true do end")
    assert str(e.value) == "Error registering functions: ERR FUNCTION LOAD timeout"
    assert time.monotonic() - started < 5
    assert c.fcall("echo_keys", 1, "k", "a") == [b"k", b"a"], "the server goes on"


def test_list_stats_delete_dump_and_restore(c):
    assert libraries(c) == {b"mylib": {b"echo_keys": (None, []), b"reader": (b"reads a key", [b"no-writes"]),
                                       b"incr_by": (None, [])}}
    code = as_dict(c.execute_command("FUNCTION", "LIST", "LIBRARYNAME", "MY*", "WITHCODE")[0])[b"library_code"]
    assert code == LIB.encode()
    assert c.execute_command("FUNCTION", "LIST", "LIBRARYNAME", "nomatch*") == []
    stats = as_dict(c.execute_command("FUNCTION", "STATS"))
    assert stats[b"running_script"] is None
    assert as_dict(as_dict(stats[b"engines"])[b"LUA"]) == {b"libraries_count": 1, b"functions_count": 3}
    payload = c.function_dump()
    with pytest.raises(redis.ResponseError, match="^Library mylib already exists$"):
        c.function_restore(payload)
    assert c.function_delete("mylib")
    with pytest.raises(redis.ResponseError, match="^Library not found$"):
        c.function_delete("mylib")
    assert c.function_restore(payload) and c.fcall("echo_keys", 1, "x", "y") == [b"x", b"y"]
    assert c.function_restore(payload, "REPLACE")
    with pytest.raises(redis.ResponseError, match="^DUMP payload version or checksum are wrong$"):
        c.function_restore(payload[:-1] + bytes([payload[-1] ^ 1]))
    with pytest.raises(redis.ResponseError, match="^NOTBUSY No scripts in execution right now.$"):
        c.execute_command("FUNCTION", "KILL")


def test_libraries_survive_a_restart_through_the_snapshot_and_the_log(tmp_path):
    if _external():
        pytest.skip("starts its own servers")
    first = Server(extra=("--appendonly", "yes"))
    try:
        c = redis.Redis(port=first.port)
        c.function_load(LIB)
        c.bgrewriteaof()  # the libraries go into the log's base snapshot
        deadline = time.monotonic() + 30
        while c.info("persistence")["aof_rewrite_in_progress"] or c.info("persistence")["aof_rewrite_scheduled"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        c.function_load(LIB.replace("mylib", "second").replace("'echo_keys'", "'e2'").replace("'reader'", "'r2'")
                        .replace("'incr_by'", "'i2'"))  # this one into its tail
        c.save()  # and both into dump.rdb
        shutil.copytree(os.path.join(first.dir.name, "appendonlydir"), tmp_path / "aof" / "appendonlydir")
        os.makedirs(tmp_path / "rdb")
        shutil.copy(os.path.join(first.dir.name, "dump.rdb"), tmp_path / "rdb")
    finally:
        first.stop()
    for folder, extra in ((tmp_path / "aof", ("--appendonly", "yes")), (tmp_path / "rdb", ())):
        again = Server(extra=(*extra, "--dir", str(folder)))
        try:
            c = redis.Redis(port=again.port)
            assert sorted(libraries(c)) == [b"mylib", b"second"], folder
            assert c.fcall("i2", 1, "n", 2) == 2
        finally:
            again.stop()


def test_a_replica_gets_the_libraries_in_its_full_sync_and_the_stream(pair_of_servers):
    """Both ways with Redis 7.0.15: the replica receives the master's libraries in the
    snapshot of its full sync (Redis's RDB records), then each change in the stream."""
    basalt, real = pair_of_servers
    for master, replica in ((real, basalt), (basalt, real)):
        m, r = redis.Redis(port=master.port), redis.Redis(port=replica.port)
        m.flushall()
        m.function_flush()
        m.function_load(LIB)
        r.replicaof("127.0.0.1", master.port)
        deadline = time.monotonic() + 20
        while r.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "no link"
            time.sleep(0.05)
        assert list(libraries(r)) == [b"mylib"]
        m.function_load("#!lua name=later\nredis.register_function('later', function() return 'later' end)")
        m.fcall("incr_by", 1, "counter", 7)
        m.execute_command("WAIT", 1, 5000)
        assert sorted(libraries(r)) == [b"later", b"mylib"]
        assert r.fcall_ro("reader", 1, "counter") == b"7"
        r.replicaof("no", "one")
        m.function_flush()
        r.function_flush()
