"""Geospatial indexes (GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE and
the GEORADIUS family) as Redis 7.0.15 answers.

The expected values are redis-server 7.0.15's own answers to the same commands; every
test passes against Redis too (BASALT_TEST_SERVER=/usr/bin/redis-server). The random
sequences of test_differential.py compare every form and option byte for byte with a
live Redis, in RESP2 and RESP3, keyspace events included.
"""

import pytest
import redis

SICILY = [13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"]


@pytest.fixture
def c(own_target):
    c = own_target.client(decode_responses=True)
    assert c.geoadd("Sicily", SICILY) == 2
    yield c
    c.close()


def test_positions_are_scores_of_a_sorted_set(c):
    assert c.type("Sicily") == "zset"
    assert c.zscore("Sicily", "Palermo") == 3479099956230698
    # (redis-py turns the coordinates into floats.)
    assert c.geopos("Sicily", "Palermo", "nosuch") == [(13.361389338970184, 38.1155563954963), None]
    assert c.geohash("Sicily", "Palermo", "Catania", "nosuch") == ["sqc8b49rny0", "sqdtr74hyu0", None]
    assert c.geodist("Sicily", "Palermo", "Catania") == 166274.1516  # (redis-py: a float)
    assert c.geodist("Sicily", "Palermo", "Catania", "km") == 166.2742
    assert c.execute_command("GEODIST", "Sicily", "Palermo", "nosuch") is None
    # NX, XX and CH as ZADD's.
    assert c.geoadd("Sicily", [13.361389, 38.115556, "Palermo"], nx=True) == 0
    assert c.geoadd("Sicily", [13.5, 38.2, "Palermo"], xx=True, ch=True) == 1
    assert c.geoadd("Sicily", [13.361389, 38.115556, "Palermo"]) == 0


def test_searches_find_members_by_radius_and_box(c):
    c.geoadd("Sicily", [12.758489, 38.788135, "edge1", 17.241510, 38.788135, "edge2"])
    assert c.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHDIST", "ASC") == [
        ["Catania", "56.4413"], ["Palermo", "190.4424"]]
    assert c.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km", "ASC",
                             "WITHCOORD", "WITHDIST") == [
        ["Catania", "56.4413", ["15.08726745843887329", "37.50266842333162032"]],
        ["Palermo", "190.4424", ["13.36138933897018433", "38.11555639549629859"]],
        ["edge2", "279.7403", ["17.24151045083999634", "38.78813451624225195"]],
        ["edge1", "279.7405", ["12.7584877610206604", "38.78813451624225195"]]]
    assert c.execute_command("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km",
                             "DESC", "COUNT", 1) == ["Catania"]
    assert c.execute_command("GEORADIUSBYMEMBER", "Sicily", "Palermo", 100, "km") == ["Palermo", "edge1"]
    assert c.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHHASH", "COUNT", 1) == [
        ["Catania", 3479447370796909]]


def test_stored_results_are_sorted_sets(c):
    n = c.execute_command("GEOSEARCHSTORE", "near", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km",
                          "STOREDIST")
    assert n == 2
    assert c.zrange("near", 0, -1, withscores=True) == [("Catania", 56.4412578701582), ("Palermo", 190.44242984775784)]
    assert c.execute_command("GEORADIUS", "Sicily", 15, 37, 100, "km", "STORE", "near") == 1
    assert c.zrange("near", 0, -1, withscores=True) == [("Catania", 3479447370796909.0)]
    # Nothing found (or no source): the destination is deleted.
    assert c.execute_command("GEOSEARCHSTORE", "near", "Sicily", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "m") == 0
    assert c.exists("near") == 0


def test_errors_are_redis_s(c):
    c.set("str", "x")
    cases = [
        (["GEOADD", "Sicily", 181, 10, "x"], "invalid longitude,latitude pair 181.000000,10.000000"),
        (["GEOADD", "Sicily", 10, 86, "x"], "invalid longitude,latitude pair 10.000000,86.000000"),
        (["GEOADD", "Sicily", "NX", "XX", 1, 2, "x"], "syntax error"),
        (["GEOADD", "str", 1, 2, "x"], "WRONGTYPE Operation against a key holding the wrong kind of value"),
        (["GEODIST", "Sicily", "Palermo", "Catania", "parsec"], "unsupported unit provided. please use M, KM, FT, MI"),
        (["GEOSEARCH", "Sicily", "BYRADIUS", 1, "km", "ASC", "ASC"], "exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH"),
        (["geosearch", "Sicily", "FROMLONLAT", 1, 2, "ASC", "ASC"], "exactly one of BYRADIUS and BYBOX can be specified for geosearch"),
        (["GEOSEARCH", "Sicily", "FROMLONLAT", 1, 2, "BYRADIUS", -1, "km"], "radius cannot be negative"),
        (["GEOSEARCH", "Sicily", "FROMLONLAT", 1, 2, "BYRADIUS", "x", "km"], "need numeric radius"),
        (["GEOSEARCH", "Sicily", "FROMLONLAT", 1, 2, "BYBOX", 1, -1, "km"], "height or width cannot be negative"),
        (["GEOSEARCH", "Sicily", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "ANY"], "the ANY argument requires COUNT argument"),
        (["GEOSEARCH", "Sicily", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "COUNT", 0], "COUNT must be > 0"),
        (["GEOSEARCH", "Sicily", "FROMMEMBER", "nosuch", "BYRADIUS", 1, "km"], "could not decode requested zset member"),
        (["GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "WITHDIST"],
         "GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (["GEORADIUS", "Sicily", 1, 2, 1, "km", "STORE", "d", "WITHHASH"],
         "STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (["GEORADIUS_RO", "Sicily", 1, 2, 1, "km", "STORE", "d"], "syntax error"),
    ]
    for cmd, text in cases:
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command(*cmd)
        assert str(e.value) == text, cmd
    # A missing source: an empty reply, the member and radius of GEORADIUSBYMEMBER unread.
    assert c.execute_command("GEORADIUSBYMEMBER", "nokey", "x", "abc", "parsec") == []
    assert c.execute_command("GEOPOS", "nokey", "a") == [None]


def test_a_search_without_store_changes_nothing_a_watch_sees(c):
    with c.pipeline() as p:
        p.watch("Sicily")
        c.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km")
        p.multi()
        p.zcard("Sicily")
        assert p.execute() == [2]
    with c.pipeline() as p:
        p.watch("dest")
        c.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "STORE", "dest")
        p.multi()
        p.zcard("dest")
        with pytest.raises(redis.WatchError):
            p.execute()


def test_command_getkeys_names_the_store_destinations(c):
    assert c.command_getkeys("GEORADIUS", "k", 1, 2, 3, "m", "STORE", "a", "STOREDIST", "b") == ["k", "a", "b"]
    assert c.command_getkeys("GEORADIUSBYMEMBER", "k", "m", 3, "m", "STORE", "a") == ["k", "a"]
    assert c.command_getkeys("GEOSEARCHSTORE", "d", "s", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "m") == ["d", "s"]
