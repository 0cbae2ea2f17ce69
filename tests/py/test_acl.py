"""ACL users (issue 26, item 3), black-box with redis-py and redis-cli: every test passes
against Redis 7.0.15 too (BASALT_TEST_SERVER=redis-server), byte for byte where Redis's
output does not depend on its command dictionary's hash order.
"""

import shutil
import subprocess
import time

import pytest
import redis


def user_client(target, name, password, **kw):
    return redis.Redis(host=target.host, port=target.port, username=name, password=password,
                       socket_timeout=10, **kw)


def acl_line(c, name):
    for line in c.execute_command("ACL", "LIST"):
        line = line.decode()
        if line.split(" ")[1] == name:
            return line
    return None


def test_a_user_limited_to_cache_keys_and_get_can_do_that_and_nothing_else(own_target):
    """The issue's acceptance case: `~cache:* +get`, with Redis's error texts."""
    admin = own_target.client()
    admin.set("cache:1", "v")
    admin.set("other", "w")
    assert admin.execute_command("ACL", "SETUSER", "cacher", "on", ">s3cret", "~cache:*", "+get") == b"OK"
    u = user_client(own_target, "cacher", "s3cret")
    assert u.get("cache:1") == b"v"
    assert u.get("cache:missing") is None
    with pytest.raises(redis.exceptions.NoPermissionError,
                       match="^this user has no permissions to access one of the keys used as arguments$"):
        u.get("other")
    with pytest.raises(redis.exceptions.NoPermissionError,
                       match="^this user has no permissions to run the 'set' command$"):
        u.set("cache:1", "x")
    with pytest.raises(redis.exceptions.NoPermissionError,
                       match=r"^this user has no permissions to run the 'config\|get' command$"):
        u.config_get("maxmemory")
    assert admin.get("cache:1") == b"v", "the refused write changed nothing"
    # The classic file-write attack gets Redis's refusal at the first step.
    with pytest.raises(redis.exceptions.NoPermissionError, match=r"'config\|set' command"):
        u.config_set("dir", "/tmp")
    # AUTH and HELLO run whatever the user may do.
    assert u.execute_command("AUTH", "cacher", "s3cret")
    # ACL LOG: the newest first, each with Redis's fields.
    log = admin.execute_command("ACL", "LOG")
    entries = [dict(zip(e[::2], e[1::2])) for e in log]
    newest = entries[0]
    assert newest[b"reason"] == b"command" and newest[b"object"] == b"config|set"
    assert newest[b"username"] == b"cacher" and newest[b"context"] == b"toplevel"
    assert set(newest) == {b"count", b"reason", b"context", b"object", b"username", b"age-seconds", b"client-info"}
    assert b"user=cacher" in newest[b"client-info"]
    assert any(e[b"reason"] == b"key" and e[b"object"] == b"other" for e in entries)
    assert admin.execute_command("ACL", "LOG", "RESET") == b"OK"
    assert admin.execute_command("ACL", "LOG") == []


def test_wrong_passwords_disabled_users_and_the_auth_log(own_target):
    admin = own_target.client()
    admin.execute_command("ACL", "SETUSER", "ann", "on", ">pw1", ">pw2", "allkeys", "+@all")
    for pw in ("pw1", "pw2"):
        assert user_client(own_target, "ann", pw).ping()
    for name, pw in (("ann", "nope"), ("nobody", "pw1")):
        with pytest.raises(redis.exceptions.AuthenticationError):
            user_client(own_target, name, pw).ping()
    admin.execute_command("ACL", "SETUSER", "ann", "<pw1")
    with pytest.raises(redis.exceptions.AuthenticationError):
        user_client(own_target, "ann", "pw1").ping()
    admin.execute_command("ACL", "SETUSER", "ann", "off")
    with pytest.raises(redis.exceptions.AuthenticationError):
        user_client(own_target, "ann", "pw2").ping()
    with pytest.raises(redis.exceptions.AuthenticationError,
                       match="^invalid username-password pair or user is disabled.$"):
        admin.execute_command("AUTH", "ann", "pw2")
    entry = dict(zip(*[iter(admin.execute_command("ACL", "LOG", "1")[0])] * 2))
    assert entry[b"reason"] == b"auth" and entry[b"object"] == b"AUTH" and entry[b"username"] == b"ann"
    # HELLO AUTH, RESP3.
    admin.execute_command("ACL", "SETUSER", "ann", "on")
    r3 = redis.Redis(host=own_target.host, port=own_target.port, protocol=3, username="ann", password="pw2")
    assert r3.execute_command("ACL", "WHOAMI") in (b"ann", "ann")


def test_setuser_is_all_or_nothing_and_errors_are_redis_s(own_target):
    c = own_target.client()
    cases = [
        (["bad"], "ERR Error in ACL SETUSER modifier 'bad': Syntax error"),
        (["+nosuch"], "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"),
        (["+@nosuch"], "ERR Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL"),
        (["allkeys", "~a"], "ERR Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"),
        (["allchannels", "&a"], "ERR Error in ACL SETUSER modifier '&a': Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"),
        (["<never"], "ERR Error in ACL SETUSER modifier '<never': The password you are trying to remove from the user does not exist"),
        (["#abc"], "ERR Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"),
        (["%X~a"], "ERR Error in ACL SETUSER modifier '%X~a': Syntax error"),
    ]
    for rules, text in cases:
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("ACL", "SETUSER", "eve", "on", *rules)
        assert str(e.value) == text.removeprefix("ERR ")
    assert c.execute_command("ACL", "GETUSER", "eve") is None, "a refused SETUSER creates nothing"
    with pytest.raises(redis.ResponseError, match="^The 'default' user cannot be removed$"):
        c.execute_command("ACL", "DELUSER", "default")
    with pytest.raises(redis.ResponseError, match="^Unknown category 'nosuch'$"):
        c.execute_command("ACL", "CAT", "nosuch")


def test_acl_list_getuser_and_cat_describe_users_as_redis(own_target):
    c = own_target.client()
    exact = [
        (["on", ">p1", "~cache:*", "+get"], "user t on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~cache:* resetchannels -@all +get"),
        (["on", "nopass", "~*", "&*", "+@all", "-get", "+config|get"], "user t on nopass ~* &* +@all -get"),
        (["+@read", "-get", "+get"], "user t off resetchannels -@all +@read"),
        (["+@all", "-@all", "+get"], "user t off resetchannels -@all +get"),
        (["allcommands", "-get"], "user t off resetchannels +@all -get"),
        (["+config|get", "+config"], "user t off resetchannels -@all +config"),
        (["+@all", "-config|get"], "user t off resetchannels +@all -config|get"),
        (["~a", "~b", "allkeys"], "user t off ~* resetchannels -@all"),
        (["%R~r:*", "%W~w:*", "%RW~x"], "user t off %R~r:* %W~w:* ~x resetchannels -@all"),
        (["resetkeys", "~a:*", "resetchannels", "&c:*"], "user t off ~a:* resetchannels &c:* -@all"),
        (["off", ">x", ">y", "<x"], "user t off #a1fce4363854ff888cff4b8e7875d600c2682390412a8cf79b37d0b11148b0fa resetchannels -@all"),
        (["+acl|whoami"], "user t off resetchannels -@all +acl|whoami"),
        (["reset"], "user t off sanitize-payload resetchannels -@all"),
        (["allchannels"], "user t off &* -@all"),
        (["+@dangerous"], "user t off resetchannels -@all +@dangerous"),
        (["+@all", "-@admin"], "user t off resetchannels +@all -@admin"),
    ]
    for rules, line in exact:
        c.execute_command("ACL", "DELUSER", "t")
        assert c.execute_command("ACL", "SETUSER", "t", *rules) == b"OK"
        assert acl_line(c, "t") == line, rules
    # Single commands come in hash order in Redis: compared as sets.
    c.execute_command("ACL", "DELUSER", "t")
    c.execute_command("ACL", "SETUSER", "t", "+get", "+mget", "+strlen")
    words = acl_line(c, "t").split(" ")
    assert words[:5] == ["user", "t", "off", "resetchannels", "-@all"]
    assert sorted(words[5:]) == ["+get", "+mget", "+strlen"]
    c.execute_command("ACL", "SETUSER", "t", "on", ">p1", "%R~r:*", "&news")
    u = c.execute_command("ACL", "GETUSER", "t")
    got = dict(zip(u[::2], u[1::2]))
    assert got[b"flags"] == [b"on"]
    assert got[b"passwords"] == [b"f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a"]
    assert got[b"keys"] == b"%R~r:*" and got[b"channels"] == b"&news" and got[b"selectors"] == []
    assert c.execute_command("ACL", "USERS") == [b"default", b"t"]
    cats = c.execute_command("ACL", "CAT")
    assert cats[:3] == [b"keyspace", b"read", b"write"] and b"dangerous" in cats
    assert b"get" in c.execute_command("ACL", "CAT", "string")
    pw = c.execute_command("ACL", "GENPASS")
    assert len(pw) == 64 and int(pw, 16) >= 0
    assert len(c.execute_command("ACL", "GENPASS", "5")) == 2


def test_dryrun_channels_and_read_write_key_permissions(own_target):
    c = own_target.client()
    c.execute_command("ACL", "SETUSER", "u", "on", ">pw", "~k:*", "%R~ro:*", "&news.*", "+@all")
    assert c.execute_command("ACL", "DRYRUN", "u", "get", "k:1") == b"OK"
    assert c.execute_command("ACL", "DRYRUN", "u", "set", "ro:1", "v") == b"This user has no permissions to access the 'ro:1' key"
    assert c.execute_command("ACL", "DRYRUN", "u", "publish", "other", "m") == b"This user has no permissions to access the 'other' channel"
    with pytest.raises(redis.ResponseError, match="^User 'nobody' not found$"):
        c.execute_command("ACL", "DRYRUN", "nobody", "get", "x")
    with pytest.raises(redis.ResponseError, match="^Command 'nosuch' not found$"):
        c.execute_command("ACL", "DRYRUN", "u", "nosuch")
    u = user_client(own_target, "u", "pw")
    keys_err = "^this user has no permissions to access one of the keys used as arguments$"
    assert u.mset({"k:1": "a", "k:2": "b"})
    with pytest.raises(redis.exceptions.NoPermissionError, match=keys_err):
        u.mset({"k:1": "a", "x": "b"})
    assert u.get("ro:1") is None
    with pytest.raises(redis.exceptions.NoPermissionError, match=keys_err):
        u.set("ro:1", "v")
    # LMOVE reads and deletes from its source, inserts into its destination: a
    # read-only destination is refused.
    u.rpush("k:list", "e")
    with pytest.raises(redis.exceptions.NoPermissionError, match=keys_err):
        u.lmove("k:list", "ro:list")
    # SORT ... STORE: the destination is written.
    with pytest.raises(redis.exceptions.NoPermissionError, match=keys_err):
        u.sort("k:list", store="ro:sorted")
    chan_err = "^this user has no permissions to access one of the channels used as arguments$"
    assert u.publish("news.a", "m") == 0
    with pytest.raises(redis.exceptions.NoPermissionError, match=chan_err):
        u.publish("other", "m")
    # A pattern subscription must equal one of the user's patterns.
    p = u.pubsub()
    p.psubscribe("news.*")
    assert p.get_message(timeout=5)["type"] == "psubscribe"
    p.close()
    with pytest.raises(redis.exceptions.NoPermissionError, match=chan_err):
        u.execute_command("PSUBSCRIBE", "news.a*")


def test_inside_multi_a_refusal_aborts_the_transaction(own_target):
    c = own_target.client()
    c.execute_command("ACL", "SETUSER", "m", "on", ">pw", "~*", "+multi", "+exec", "+get", "+acl|log")
    u = user_client(own_target, "m", "pw")
    p = u.pipeline(transaction=True)
    p.get("a")
    p.set("a", "1")
    # (redis-py reports the queued command's NOPERM; EXEC answered EXECABORT.)
    with pytest.raises(redis.exceptions.NoPermissionError, match="'set' command"):
        p.execute()
    assert c.get("a") is None
    entry = dict(zip(*[iter(c.execute_command("ACL", "LOG", "1")[0])] * 2))
    assert entry[b"context"] == b"multi" and entry[b"object"] == b"set"


def test_users_follow_changes_and_deleted_users_are_disconnected(own_target):
    c = own_target.client()
    c.execute_command("ACL", "SETUSER", "v", "on", ">pw", "~*", "+get")
    u = user_client(own_target, "v", "pw")
    assert u.get("x") is None
    with pytest.raises(redis.exceptions.NoPermissionError):
        u.set("x", "1")
    # A change applies to the connected client's next command.
    c.execute_command("ACL", "SETUSER", "v", "+set")
    assert u.set("x", "1")
    clients = c.client_list()
    assert any(cl["user"] == "v" for cl in clients)
    with pytest.raises(redis.ResponseError, match="^No such user 'nosuch'$"):
        c.execute_command("CLIENT", "KILL", "USER", "nosuch")
    assert c.execute_command("ACL", "DELUSER", "v", "nosuch") == 1
    deadline = time.monotonic() + 10
    while any(cl["user"] == "v" for cl in c.client_list()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(cl["user"] == "v" for cl in c.client_list())


def test_requirepass_is_the_default_user_s_password(spawn):
    t = spawn("--requirepass", "secret")
    c = redis.Redis(host=t.host, port=t.port, socket_timeout=10)
    with pytest.raises(redis.exceptions.AuthenticationError):
        c.ping()
    a = redis.Redis(host=t.host, port=t.port, password="secret")
    assert a.execute_command("ACL", "WHOAMI") == b"default"
    line = acl_line(a, "default")
    assert line.startswith("user default on #2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ")
    assert a.config_set("requirepass", "")
    assert acl_line(a, "default") == "user default on nopass ~* &* +@all"
    assert redis.Redis(host=t.host, port=t.port).ping()
    # A default user turned off makes new connections authenticate.
    a.execute_command("ACL", "SETUSER", "admin", "on", ">a", "~*", "&*", "+@all")
    a.execute_command("ACL", "SETUSER", "default", "off")
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host=t.host, port=t.port).ping()
    assert user_client(t, "admin", "a").ping()


def test_users_from_the_config_file_and_the_acl_file(spawn, tmp_path):
    acl_file = tmp_path / "users.acl"
    acl_file.write_text("user fileuser on >fp ~f:* +get\n")
    t = spawn("--aclfile", str(acl_file))
    c = redis.Redis(host=t.host, port=t.port)
    assert user_client(t, "fileuser", "fp").get("f:1") is None
    c.execute_command("ACL", "SETUSER", "later", "on", ">lp", "+ping")
    assert c.execute_command("ACL", "SAVE") == b"OK"
    saved = acl_file.read_text()
    assert "user later on #" in saved and "user fileuser on #" in saved
    acl_file.write_text("user fileuser on >fp ~f:* +get\n")
    assert c.execute_command("ACL", "LOAD") == b"OK"
    assert c.execute_command("ACL", "GETUSER", "later") is None
    acl_file.write_text("user broken on +nosuch\n")
    with pytest.raises(redis.ResponseError, match="Unknown command or category name in ACL"):
        c.execute_command("ACL", "LOAD")
    assert c.execute_command("ACL", "GETUSER", "fileuser") is not None, "a failed LOAD changes nothing"


def test_the_config_file_s_user_lines(tmp_path):
    """`user` lines in the config file, and CONFIG REWRITE writing the users back."""
    from conftest import Target, _binary, _free_port  # the config file must come first: started here
    conf = tmp_path / "server.conf"
    conf.write_text("user cfg on >cp ~c:* +get +set\n")
    binary = _binary()
    port = _free_port()
    proc = subprocess.Popen([binary, str(conf), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", ""],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=port).ping():
                    break
            except redis.ConnectionError:
                time.sleep(0.05)
        t = Target("127.0.0.1", port)
        u = user_client(t, "cfg", "cp")
        assert u.set("c:1", "v") and u.get("c:1") == b"v"
        admin = redis.Redis(port=port)
        admin.execute_command("ACL", "SETUSER", "added", "on", ">ap", "+ping")
        assert admin.config_rewrite()
        text = conf.read_text()
        assert "user cfg on #" in text and "user added on #" in text
    finally:
        proc.kill()
        proc.wait()


def test_redis_cli_logs_in_with_a_user(own_target):
    cli = shutil.which("redis-cli")
    if not cli:
        pytest.skip("redis-cli not installed")
    c = own_target.client()
    c.execute_command("ACL", "SETUSER", "clier", "on", ">cp", "~*", "+get", "+set")
    out = subprocess.run([cli, "-h", own_target.host, "-p", str(own_target.port), "--user", "clier", "--pass", "cp",
                          "--no-auth-warning", "set", "k", "v"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "OK"
    out = subprocess.run([cli, "-h", own_target.host, "-p", str(own_target.port), "--user", "clier", "--pass", "cp",
                          "--no-auth-warning", "del", "k"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "NOPERM this user has no permissions to run the 'del' command"


def test_rules_changed_before_exec_and_reset_returns_to_the_default_user(own_target):
    admin = own_target.client()
    admin.execute_command("ACL", "SETUSER", "mx", "on", ">pw", "~*", "+@all")
    u = user_client(own_target, "mx", "pw")
    conn = u.connection_pool.get_connection("_")
    try:
        conn.send_command("MULTI")
        assert conn.read_response() == b"OK"
        conn.send_command("SET", "k", "v")
        assert conn.read_response() == b"QUEUED"
        admin.execute_command("ACL", "SETUSER", "mx", "-set")
        conn.send_command("EXEC")
        reply = conn.read_response()
        assert len(reply) == 1 and isinstance(reply[0], redis.exceptions.NoPermissionError)
        assert str(reply[0]) == ("ACLs rules changed between the moment the transaction was accumulated and "
                                 "the EXEC call. This command is no longer allowed for the following reason: "
                                 "no permission to execute the command or subcommand")
        assert admin.get("k") is None
        conn.send_command("RESET")
        assert conn.read_response() == b"RESET"
        conn.send_command("ACL", "WHOAMI")
        assert conn.read_response() == b"default"
    finally:
        u.connection_pool.release(conn)


def test_selectors_add_sets_of_rules_and_the_most_relevant_refusal_is_named(own_target):
    c = own_target.client()
    cases = [
        (["on", "(~x:*", "+get)"], "user s on resetchannels -@all (~x:* resetchannels -@all +get)"),
        (["(~x:* +get)", "(%R~y:* &ch +@read)"],
         "user s off resetchannels -@all (~x:* resetchannels -@all +get) (%R~y:* resetchannels &ch -@all +@read)"),
        (["(~x:* +get)", "clearselectors"], "user s off resetchannels -@all"),
        (["(~x:* +get)", "reset"], "user s off sanitize-payload resetchannels -@all"),
        (["()"], "user s off resetchannels -@all (resetchannels -@all)"),
    ]
    for rules, line in cases:
        c.execute_command("ACL", "DELUSER", "s")
        assert c.execute_command("ACL", "SETUSER", "s", *rules) == b"OK"
        assert acl_line(c, "s") == line, rules
    c.execute_command("ACL", "DELUSER", "s")
    for rules, text in (
        (["(~x:* +nosuch)"], "Error in ACL SETUSER modifier '(~x:* +nosuch)': Unknown command or category name in ACL"),
        (["(on)"], "Error in ACL SETUSER modifier '(on)': Syntax error"),
        (["(~x:* +get", "more"], "Unmatched parenthesis in acl selector starting at '(~x:* +get'."),
    ):
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("ACL", "SETUSER", "s", *rules)
        assert str(e.value) == text
    c.execute_command("ACL", "SETUSER", "s", "reset", "on", "nopass", "~a:*", "+set", "(~x:* +get)", "(&c +publish)")
    u = c.execute_command("ACL", "GETUSER", "s")
    got = dict(zip(u[::2], u[1::2]))
    assert got[b"commands"] == b"-@all +set" and got[b"keys"] == b"~a:*"
    assert got[b"selectors"] == [[b"commands", b"-@all +get", b"keys", b"~x:*", b"channels", b""],
                                 [b"commands", b"-@all +publish", b"keys", b"", b"channels", b"&c"]]
    dry = lambda *a: c.execute_command("ACL", "DRYRUN", "s", *a)
    assert dry("get", "x:1") == b"OK" and dry("set", "a:1", "v") == b"OK" and dry("publish", "c", "m") == b"OK"
    assert dry("get", "a:1") == b"This user has no permissions to access the 'a:1' key"
    assert dry("set", "x:1", "v") == b"This user has no permissions to access the 'x:1' key"
    assert dry("publish", "zz", "v") == b"This user has no permissions to access the 'zz' channel"
    assert dry("lpush", "q", "v") == b"This user has no permissions to run the 'lpush' command"
    u = redis.Redis(host=own_target.host, port=own_target.port, username="s", password="any")
    assert u.set("a:1", "v") and u.get("x:1") is None
    with pytest.raises(redis.exceptions.NoPermissionError, match="keys used as arguments"):
        u.get("a:1")
