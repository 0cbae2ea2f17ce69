"""Sharded pub/sub (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, PUBSUB SHARDCHANNELS and
SHARDNUMSUB) as Redis 7.0.15 runs it without a cluster: shard channels are a namespace
of their own, which patterns do not match. Passes against Redis too
(BASALT_TEST_SERVER=/usr/bin/redis-server).
"""

import time

import pytest
import redis


def next_message(p, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = p.get_message(timeout=0.1)
        if m is not None:
            return m
    raise AssertionError("no message")


@pytest.mark.parametrize("protocol", [2, 3])
def test_shard_channels_are_their_own_namespace(own_target, protocol):
    c = own_target.client(protocol=protocol)
    sub = own_target.client(protocol=protocol).pubsub()
    sub.ssubscribe("news")
    assert next_message(sub) == {"type": "ssubscribe", "pattern": None, "channel": b"news", "data": 1}
    sub.psubscribe("*")
    assert next_message(sub)["type"] == "psubscribe"
    assert c.spublish("news", "shard message") == 1
    assert next_message(sub) == {"type": "smessage", "pattern": None, "channel": b"news", "data": b"shard message"}
    # A plain PUBLISH to the same name reaches the pattern, not the shard subscription.
    assert c.publish("news", "plain message") == 1
    assert next_message(sub)["type"] == "pmessage"
    assert c.execute_command("PUBSUB", "SHARDCHANNELS") == [b"news"]
    assert c.execute_command("PUBSUB", "SHARDCHANNELS", "n*") == [b"news"]
    assert c.execute_command("PUBSUB", "SHARDNUMSUB", "news", "other") == [b"news", 1, b"other", 0]
    assert c.execute_command("PUBSUB", "CHANNELS") == []
    assert c.info("stats")["pubsubshard_channels"] == 1
    sub.sunsubscribe("news")
    assert next_message(sub) == {"type": "sunsubscribe", "pattern": None, "channel": b"news", "data": 0}
    assert c.spublish("news", "nobody") == 0
    sub.close()


def test_a_resp2_subscriber_to_shard_channels_is_in_subscribed_mode(own_target):
    c = own_target.client()
    conn = c.connection_pool.get_connection("_")
    try:
        conn.send_command("SSUBSCRIBE", "a", "b")
        assert conn.read_response() == [b"ssubscribe", b"a", 1]
        assert conn.read_response() == [b"ssubscribe", b"b", 2]
        conn.send_command("SUBSCRIBE", "plain")
        assert conn.read_response() == [b"subscribe", b"plain", 1], "counts apart from shard channels"
        conn.send_command("GET", "x")
        with pytest.raises(redis.ResponseError, match="only \\(P\\|S\\)SUBSCRIBE"):
            conn.read_response()
        conn.send_command("SUNSUBSCRIBE")
        # All of them, in an order of the server's own, the count going down.
        replies = [conn.read_response(), conn.read_response()]
        assert sorted(r[1] for r in replies) == [b"a", b"b"]
        assert [(r[0], r[2]) for r in replies] == [(b"sunsubscribe", 1), (b"sunsubscribe", 0)]
    finally:
        conn.disconnect()
        c.connection_pool.release(conn)


def test_ssubscribe_is_refused_inside_a_transaction_and_a_script(own_target):
    c = own_target.client()
    with c.pipeline(transaction=True) as p:
        p.execute_command("SSUBSCRIBE", "x")
        with pytest.raises(redis.ResponseError, match="SSUBSCRIBE isn.t allowed for a DENY BLOCKING client$"):
            p.execute()
    with pytest.raises(redis.ResponseError, match="This Redis command is not allowed from script"):
        c.eval("return redis.call('ssubscribe', 'x')", 0)
    assert c.eval("return redis.call('spublish', 'x', 'm')", 0) == 0
    # Shard channels stand where keys would, but are none.
    with pytest.raises(redis.ResponseError, match="^The command has no key arguments$"):
        c.execute_command("COMMAND", "GETKEYS", "SPUBLISH", "chan", "msg")
