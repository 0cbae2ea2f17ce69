"""Keyspace notifications across event loops: clients on two loops change the same few
keys at once, and for every key the last event a subscriber received must agree with
the key's final state (a `del` last and the key exists, or a `set` last and it does not,
means two loops published in another order than they changed the key). Run without the
log (events published under the key's shard lock) and with `appendfsync always`
(published after the record, before the ordering stripes are released).

What it cannot show: a publication just after the lock is released instead of under
it (a build doing that passed 40 rounds of 4 x 1,500 commands here: the window is a few
microseconds); it guards against coarser misordering, such as events published per
batch or per loop.

Basalt only (it starts its own servers with two event loops, connections spread by the
kernel: 48 connections over a run); bounded: ROUNDS rounds of WRITERS clients doing OPS
commands each.
"""

import random
import threading

import pytest
import redis

from conftest import Server, _external

ROUNDS = 12
WRITERS = 4
OPS = 400
KEYS = [f"ord:{i}" for i in range(3)]


def writer(port, seed, errors):
    try:
        r = redis.Redis(port=port, socket_timeout=10)
        rng = random.Random(seed)
        pipe = r.pipeline(transaction=False)
        for i in range(OPS):
            key = rng.choice(KEYS)
            op = rng.random()
            if op < 0.4:
                pipe.set(key, f"{seed}-{i}")
            elif op < 0.7:
                pipe.delete(key)
            elif op < 0.85:
                pipe.rpush(key + ":l", "x")
                pipe.delete(key + ":l")
            else:
                pipe.getdel(key)
            if i % 8 == 7:
                pipe.execute(raise_on_error=False)
        pipe.execute(raise_on_error=False)
    except Exception as e:  # reported by the test
        errors.append(repr(e))


@pytest.mark.parametrize("extra", [(), ("--appendonly", "yes", "--appendfsync", "always")],
                         ids=["no-log", "always"])
def test_last_event_agrees_with_final_state_across_loops(extra):
    if _external():
        pytest.skip("this test starts its own servers")
    srv = Server(extra=("--threads", "2", "--loop-spread-busy", "0",
                        "--notify-keyspace-events", "Kg$", *extra))
    try:
        r = redis.Redis(port=srv.port, socket_timeout=10)
        sub = r.pubsub()
        sub.psubscribe("__keyspace@0__:ord:*")
        sub.subscribe("ord-mark")
        for _ in range(2):
            sub.get_message(timeout=5)
        for rnd in range(ROUNDS):
            errors = []
            threads = [threading.Thread(target=writer, args=(srv.port, rnd * 100 + w, errors))
                       for w in range(WRITERS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert not errors, errors
            r.publish("ord-mark", str(rnd))
            last = {}
            while True:
                m = sub.get_message(timeout=10)
                assert m is not None, "the mark never arrived"
                if m["type"] == "message" and m["channel"] == b"ord-mark":
                    assert m["data"] == str(rnd).encode()
                    break
                if m["type"] == "pmessage":
                    last[m["channel"].decode().split(":", 1)[1]] = m["data"].decode()
            for key in KEYS:
                if key not in last:
                    continue
                exists = r.exists(key) == 1
                assert (last[key] != "del") == exists, \
                    f"round {rnd}: {key} exists={exists} but its last event was {last[key]}"
    finally:
        srv.stop()
