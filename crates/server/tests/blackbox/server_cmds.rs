//! Server commands: INFO, CONFIG, COMMAND, TIME, SLOWLOG, DEBUG.
//! CONFIG SET / RESETSTAT and SLOWLOG RESET change global state and run on
//! `exclusive()` servers.

use std::collections::HashMap;

use crate::assert_bytes;
use crate::harness::*;

fn info(c: &mut RawConn, args: &[&str]) -> String {
    let mut full = vec!["INFO"];
    full.extend_from_slice(args);
    let reply = c.cmd(&full);
    assert!(
        reply.starts_with(b"$"),
        "INFO must be a bulk string in RESP2: {}",
        show(&reply)
    );
    parse(&reply).text()
}

/// `field:value` pairs of an INFO text.
fn info_fields(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn headers(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("# "))
        .map(|l| l.to_string())
        .collect()
}

fn config_get(c: &mut RawConn, args: &[&str]) -> HashMap<String, String> {
    let mut full = vec!["CONFIG", "GET"];
    full.extend_from_slice(args);
    parse(&c.cmd(&full))
        .pairs()
        .into_iter()
        .map(|(k, v)| (k.text(), v.text()))
        .collect()
}

#[test]
fn info_default_sections() {
    let t = shared();
    let mut c = t.raw_conn();
    let text = info(&mut c, &[]);
    assert!(text.contains("\r\n"), "INFO lines end with CRLF");
    let h = headers(&text);
    for want in [
        "# Server",
        "# Clients",
        "# Memory",
        "# Persistence",
        "# Stats",
        "# Replication",
        "# CPU",
        "# Keyspace",
    ] {
        assert!(h.iter().any(|x| x == want), "missing {want} in {h:?}");
    }
    // Commandstats is not part of the default set.
    assert!(!h.iter().any(|x| x == "# Commandstats"), "{h:?}");
    let f = info_fields(&text);
    for k in [
        "redis_version",
        "tcp_port",
        "connected_clients",
        "used_memory",
        "used_memory_rss",
        "maxmemory",
        "total_commands_processed",
        "instantaneous_ops_per_sec",
        "role",
        "used_cpu_sys",
        "used_cpu_user",
        "uptime_in_seconds",
    ] {
        assert!(f.contains_key(k), "missing field {k}");
    }
    assert_eq!(f["tcp_port"], t.port().to_string());
    assert_eq!(f["role"], "master");
    // Every non-empty line is a header or key:value.
    for l in text.lines() {
        assert!(
            l.is_empty() || l.starts_with("# ") || l.contains(':'),
            "odd INFO line {l:?}"
        );
    }
    // "default" is the same set of sections.
    assert_eq!(headers(&info(&mut c, &["default"])), h);
}

#[test]
fn info_each_section() {
    let t = shared();
    let mut c = t.raw_conn();
    let _ = c.cmd(&["GET", "srv_info:touch"]);
    let _ = c.cmd(&["SET", "srv_info:k", "v"]);
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "server",
            "# Server",
            &[
                "redis_version",
                "tcp_port",
                "uptime_in_seconds",
                "process_id",
            ],
        ),
        (
            "clients",
            "# Clients",
            &["connected_clients", "blocked_clients"],
        ),
        (
            "memory",
            "# Memory",
            &[
                "used_memory",
                "used_memory_rss",
                "used_memory_peak",
                "maxmemory",
                "maxmemory_policy",
            ],
        ),
        (
            "persistence",
            "# Persistence",
            &["loading", "rdb_changes_since_last_save", "aof_enabled"],
        ),
        (
            "stats",
            "# Stats",
            &[
                "total_connections_received",
                "total_commands_processed",
                "instantaneous_ops_per_sec",
                "expired_keys",
                "keyspace_hits",
                "keyspace_misses",
            ],
        ),
        (
            "replication",
            "# Replication",
            &["role", "connected_slaves"],
        ),
        ("cpu", "# CPU", &["used_cpu_sys", "used_cpu_user"]),
        ("commandstats", "# Commandstats", &[]),
        ("keyspace", "# Keyspace", &["db0"]),
    ];
    for (section, header, fields) in cases {
        let text = info(&mut c, &[section]);
        assert_eq!(headers(&text), [header.to_string()], "INFO {section}");
        assert!(
            text.starts_with(header),
            "INFO {section} must start with its header: {text:?}"
        );
        let f = info_fields(&text);
        for k in *fields {
            assert!(f.contains_key(*k), "INFO {section}: missing {k}");
        }
        // Section names are case-insensitive.
        let upper = info(&mut c, &[&section.to_uppercase()]);
        assert_eq!(headers(&upper), [header.to_string()]);
    }
    let f = info_fields(&info(&mut c, &["replication"]));
    assert_eq!(f["role"], "master");
    let n: i64 = info_fields(&info(&mut c, &["clients"]))["connected_clients"]
        .parse()
        .expect("int");
    assert!(n >= 1);
    let mem: i64 = info_fields(&info(&mut c, &["memory"]))["used_memory"]
        .parse()
        .expect("int");
    assert!(mem > 0);
}

#[test]
fn info_commandstats_and_keyspace_lines() {
    let t = shared();
    let mut c = t.raw_conn();
    let _ = c.cmd(&["GET", "srv_info_cs:k"]);
    let text = info(&mut c, &["commandstats"]);
    let line = text
        .lines()
        .find(|l| l.starts_with("cmdstat_get:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("cmdstat_get:calls="), "{line}");
    for part in ["usec=", "usec_per_call="] {
        assert!(line.contains(part), "{line}");
    }
    let _ = c.cmd(&["SET", "srv_info_cs:k", "v"]);
    let text = info(&mut c, &["keyspace"]);
    let line = text
        .lines()
        .find(|l| l.starts_with("db0:"))
        .unwrap_or_else(|| panic!("{text}"));
    let rest = line
        .strip_prefix("db0:keys=")
        .unwrap_or_else(|| panic!("{line}"));
    let parts: Vec<&str> = rest.split(',').collect();
    assert_eq!(parts.len(), 3, "{line}");
    assert!(parts[0].parse::<u64>().expect("keys") >= 1);
    assert!(parts[1].starts_with("expires="), "{line}");
    assert!(parts[2].starts_with("avg_ttl="), "{line}");
}

#[test]
fn info_multiple_unknown_and_all() {
    let t = shared();
    let mut c = t.raw_conn();
    // Unknown section: empty bulk string.
    assert_bytes!(c.cmd(&["INFO", "nosuchsection"]), b"$0\r\n\r\n");
    let two = info(&mut c, &["server", "clients"]);
    assert_eq!(headers(&two), ["# Server", "# Clients"]);
    let all = headers(&info(&mut c, &["all"]));
    assert!(all.iter().any(|h| h == "# Commandstats"), "{all:?}");
    assert!(all.iter().any(|h| h == "# Keyspace"), "{all:?}");
    let everything = headers(&info(&mut c, &["everything"]));
    assert!(
        everything.iter().any(|h| h == "# Commandstats"),
        "{everything:?}"
    );
}

#[test]
fn info_keyspace_counts_keys_and_expires() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let prefix = format!("db{}:", t.db);
    let text = info(&mut c, &["keyspace"]);
    assert!(
        !text.lines().any(|l| l.starts_with(&prefix)),
        "empty db listed: {text}"
    );
    assert_bytes!(c.cmd(&["MSET", "a", "1", "b", "2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "c", "3", "EX", "1000"]), b"+OK\r\n");
    let text = info(&mut c, &["keyspace"]);
    let line = text
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.starts_with(&format!("{prefix}keys=3,expires=1,avg_ttl=")),
        "{line}"
    );
    let avg: i64 = line.rsplit('=').next().expect("avg").parse().expect("int");
    assert!((0..=1_000_000).contains(&avg), "{line}");
}

#[test]
fn config_get_patterns() {
    let t = shared();
    let mut c = t.raw_conn();
    let m = config_get(&mut c, &["maxmemory"]);
    assert_eq!(m.len(), 1);
    assert!(m.contains_key("maxmemory"));
    let m = config_get(&mut c, &["*max*-len"]);
    for k in ["slowlog-max-len", "proto-max-bulk-len"] {
        assert!(m.contains_key(k), "{k} missing from {m:?}");
    }
    assert!(
        m.keys().all(|k| k.contains("max") && k.ends_with("-len")),
        "{m:?}"
    );
    assert_eq!(m["proto-max-bulk-len"], "536870912");
    assert_bytes!(c.cmd(&["CONFIG", "GET", "nosuchparam"]), b"*0\r\n");
    let port = t.port().to_string();
    let m = config_get(&mut c, &["port", "maxmemory"]);
    assert_eq!(m.len(), 2);
    assert_eq!(m["port"], port);
    // Duplicates are reported once.
    let r = parse(&c.cmd(&["CONFIG", "GET", "port", "port", "p?rt"]));
    assert_eq!(r.items().len(), 2, "{r:?}");
    let m = config_get(
        &mut c,
        &[
            "databases",
            "save",
            "appendonly",
            "maxmemory-policy",
            "bind",
        ],
    );
    assert_eq!(m["databases"], "16");
    assert_eq!(m["save"], "");
    assert_eq!(m["appendonly"], "no");
    assert_eq!(m["maxmemory-policy"], "noeviction");
    assert_eq!(m["bind"], "127.0.0.1");
    assert_bytes!(
        c.cmd(&["CONFIG", "GET"]),
        b"-ERR wrong number of arguments for 'config|get' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "FOO"]),
        b"-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"
    );
}

#[test]
fn config_set_and_errors() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["CONFIG", "SET", "maxmemory", "100mb"]), b"+OK\r\n");
    assert_eq!(config_get(&mut c, &["maxmemory"])["maxmemory"], "104857600");
    assert_eq!(
        info_fields(&info(&mut c, &["memory"]))["maxmemory"],
        "104857600"
    );
    // Several parameters at once.
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory", "1mb", "hz", "20"]),
        b"+OK\r\n"
    );
    let m = config_get(&mut c, &["maxmemory", "hz"]);
    assert_eq!(m["maxmemory"], "1048576");
    assert_eq!(m["hz"], "20");
    // Parameter names are case-insensitive.
    assert_bytes!(c.cmd(&["CONFIG", "SET", "HZ", "12"]), b"+OK\r\n");
    assert_eq!(config_get(&mut c, &["hz"])["hz"], "12");
    // Unknown parameter.
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "foo", "bar"]),
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "hz", "10", "foo", "1"]),
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n"
    );
    // Bad values.
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory", "abc"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory", "-1"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "hz", "abc"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "appendonly", "maybe"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'appendonly') - argument must be 'yes' or 'no'\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory-policy", "foo"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction\r\n"
    );
    // oom-score-adj-values: three integers in -2000..=2000 between single spaces, kept
    // normalized (an empty field is 0, as C's strtoll reads it).
    let oom = |c: &mut RawConn, v: &str| c.cmd(&["CONFIG", "SET", "oom-score-adj-values", v]);
    for (value, shown) in [("-2000 2000 0", "-2000 2000 0"), ("+1 02 ", "1 2 0"), ("0 200 800", "0 200 800")] {
        assert_bytes!(oom(&mut c, value), b"+OK\r\n");
        assert_eq!(config_get(&mut c, &["oom-score-adj-values"])["oom-score-adj-values"], shown);
    }
    for value in ["0 200", " 1  2  3 ", "1 2 3 4"] {
        assert_bytes!(
            oom(&mut c, value),
            b"-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - wrong number of arguments\r\n"
        );
    }
    for value in ["0 200 x", "0 200 3000", "0 200 -2001", "1 2 +", "1 2 99999999999999999999"] {
        assert_bytes!(
            oom(&mut c, value),
            b"-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - Invalid oom-score-adj-values, elements must be between -2000 and 2000.\r\n"
        );
    }
    assert_eq!(config_get(&mut c, &["oom-score-adj-values"])["oom-score-adj-values"], "0 200 800");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "hz", "10", "hz", "11"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter\r\n"
    );
    // A failing multi-set changes nothing.
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "hz", "30", "maxmemory", "abc"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"
    );
    assert_eq!(config_get(&mut c, &["hz"])["hz"], "12");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory"]),
        b"-ERR wrong number of arguments for 'config|set' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory", "0", "hz", "10"]),
        b"+OK\r\n"
    );
}

fn reply_text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

/// Issue 26, defects 4 and 5: the classic file-write attack (point `dir` and
/// `dbfilename` somewhere, write a payload, SAVE) gets Redis 7's refusal, and the limits
/// that would lock every client out cannot be set below Redis's range.
#[test]
fn config_set_refuses_protected_and_out_of_range_values() {
    let t = shared();
    let mut c = t.raw_conn();
    let fail = |name: &str, why: &str| format!("-ERR CONFIG SET failed (possibly related to argument '{name}') - {why}\r\n");
    let protected = "can't set protected config";
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "dir", "/tmp"])), fail("dir", protected));
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "dbfilename", "evil.sh"])), fail("dbfilename", protected));
    // Refusals name the parameter as written; errors in the value, in lower case.
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "DBFILENAME", "../../tmp/x.rdb"])), fail("DBFILENAME", protected));
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "DataBases", "1"])), fail("DataBases", "can't set immutable config"));
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "hz", "1", "HZ", "2"])), fail("HZ", "duplicate parameter"));
    for name in ["enable-protected-configs", "enable-debug-command", "enable-module-command"] {
        assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", name, "yes"])), fail(name, "can't set immutable config"));
    }
    let range = "argument must be between 1048576 and 9223372036854775807 inclusive";
    for name in ["proto-max-bulk-len", "client-query-buffer-limit"] {
        for v in ["1", "1048575", "1mb-", ""] {
            let got = reply_text(&c.cmd(&["CONFIG", "SET", name, v]));
            let why = if v == "1mb-" { "argument must be a memory value" } else { range };
            assert_eq!(got, fail(name, why), "{name} {v:?}");
        }
    }
    for v in ["1", "abc", "10 1 x", "0 1", "10 -1"] {
        assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "save", v])), fail("save", "Invalid save parameters"), "save {v:?}");
    }
    // The parameter named as the client wrote it (an old alias included).
    assert_eq!(
        reply_text(&c.cmd(&["CONFIG", "SET", "Hash-Max-Ziplist-Entries", "x"])),
        fail("hash-max-ziplist-entries", "argument couldn't be parsed into an integer")
    );
    assert_eq!(reply_text(&c.cmd(&["PING"])), "+PONG\r\n");
}

/// With `enable-protected-configs yes`, `dir` and `dbfilename` change at run time,
/// but `dbfilename` still takes no path and `dir` must exist (Redis 7.0.15's texts).
#[test]
fn protected_configs_when_enabled_still_refuse_paths() {
    let Some(t) = exclusive_with_args(&["--enable-protected-configs", "yes"]) else { return };
    let mut c = t.raw_conn();
    let fail = |name: &str, why: &str| format!("-ERR CONFIG SET failed (possibly related to argument '{name}') - {why}\r\n");
    for v in ["../x.rdb", "a/b.rdb", "/tmp/x.rdb"] {
        assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "dbfilename", v])), fail("dbfilename", "dbfilename can't be a path, just a filename"));
    }
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "dbfilename", "other.rdb"])), "+OK\r\n");
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "dir", "/no/such/dir"])), fail("dir", "No such file or directory"));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_str().expect("utf-8 path");
    assert_eq!(reply_text(&c.cmd(&["CONFIG", "SET", "dir", path])), "+OK\r\n");
    let got = parse(&c.cmd(&["CONFIG", "GET", "dir"]));
    let canonical = std::fs::canonicalize(dir.path()).expect("canonical");
    assert_eq!(got.items()[1].text(), canonical.to_str().expect("utf-8"));
}

#[test]
fn config_set_maxmemory_policy_and_object_freq() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]),
        b"+OK\r\n"
    );
    assert_eq!(
        config_get(&mut c, &["maxmemory-policy"])["maxmemory-policy"],
        "allkeys-lfu"
    );
    assert_bytes!(c.cmd(&["SET", "k", "v"]), b"+OK\r\n");
    let freq = parse(&c.cmd(&["OBJECT", "FREQ", "k"])).int();
    assert!(freq >= 0);
    assert_bytes!(
        c.cmd(&["OBJECT", "IDLETIME", "k"]),
        b"-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]),
        b"+OK\r\n"
    );
}

#[test]
fn config_resetstat_clears_counters() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    for _ in 0..5 {
        let _ = c.cmd(&["GET", "x"]);
    }
    let text = info(&mut c, &["commandstats"]);
    assert!(text.contains("cmdstat_get:calls=5,"), "{text}");
    assert_bytes!(c.cmd(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    let text = info(&mut c, &["commandstats"]);
    assert!(!text.contains("cmdstat_get:"), "{text}");
    let processed: i64 = info_fields(&info(&mut c, &["stats"]))["total_commands_processed"]
        .parse()
        .expect("int");
    assert!(
        processed <= 5,
        "total_commands_processed={processed} after RESETSTAT"
    );
}

#[test]
fn config_rewrite_without_config_file() {
    let t = shared();
    let mut c = t.raw_conn();
    if is_external() {
        return; // the external server may well have a config file
    }
    assert_bytes!(
        c.cmd(&["CONFIG", "REWRITE"]),
        b"-ERR The server is running without a config file\r\n"
    );
}

#[test]
fn command_count_list_info_docs() {
    let t = shared();
    let mut c = t.raw_conn();
    let count = parse(&c.cmd(&["COMMAND", "COUNT"])).int();
    assert!(count > 0);
    let list = parse(&c.cmd(&["COMMAND", "LIST"]));
    let names: Vec<String> = list.items().iter().map(|x| x.text()).collect();
    for n in ["get", "set", "ping", "config", "client"] {
        assert!(
            names.iter().any(|x| x == n),
            "{n} missing from COMMAND LIST"
        );
    }
    // COMMAND LIST also lists subcommands (e.g. config|get) in Redis 7.0;
    // the top-level ones are what COMMAND COUNT counts.
    let top = names.iter().filter(|n| !n.contains('|')).count() as i64;
    assert_eq!(top, count);
    let filtered = parse(&c.cmd(&["COMMAND", "LIST", "FILTERBY", "PATTERN", "getr*"]));
    let f: Vec<String> = filtered.items().iter().map(|x| x.text()).collect();
    assert_eq!(f, ["getrange"]);

    // COMMAND INFO get: name, arity, flags, first key, last key, step, ...
    let r = parse(&c.cmd(&["COMMAND", "INFO", "get"]));
    let entry = &r.items()[0];
    let e = entry.items();
    assert_eq!(e.len(), 10, "{entry:?}");
    assert_eq!(e[0].text(), "get");
    assert_eq!(e[1].int(), 2);
    let flags: Vec<String> = e[2].items().iter().map(|x| x.text()).collect();
    assert!(
        flags.contains(&"readonly".to_string()) && flags.contains(&"fast".to_string()),
        "{flags:?}"
    );
    assert_eq!((e[3].int(), e[4].int(), e[5].int()), (1, 1, 1));
    let cats: Vec<String> = e[6].items().iter().map(|x| x.text()).collect();
    assert!(cats.contains(&"@string".to_string()), "{cats:?}");
    let r = parse(&c.cmd(&["COMMAND", "INFO", "set", "nosuchcommand"]));
    assert_eq!(r.items().len(), 2);
    assert_eq!(r.items()[0].items()[0].text(), "set");
    assert_eq!(r.items()[0].items()[1].int(), -3);
    assert_eq!(r.items()[1], Resp::Nil);
    let mset = parse(&c.cmd(&["COMMAND", "INFO", "mset"]));
    let e = mset.items()[0].items();
    assert_eq!(
        (e[1].int(), e[3].int(), e[4].int(), e[5].int()),
        (-3, 1, -1, 2)
    );

    // COMMAND DOCS get: name -> map of doc fields.
    let r = parse(&c.cmd(&["COMMAND", "DOCS", "get"]));
    let pairs = r.pairs();
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0].0.text(), "get");
    let doc = &pairs[0].1;
    assert!(doc.get("summary").is_some());
    assert_eq!(
        doc.get("group").map(|g| g.text()),
        Some("string".to_string())
    );
    assert!(doc.get("since").is_some());
    assert_bytes!(
        c.cmd(&["COMMAND", "FOO"]),
        b"-ERR unknown subcommand 'FOO'. Try COMMAND HELP.\r\n"
    );
    assert_bytes!(
        c.cmd(&["COMMAND", "COUNT", "x"]),
        b"-ERR wrong number of arguments for 'command|count' command\r\n"
    );
}

#[test]
fn command_getkeys() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["COMMAND", "GETKEYS", "SET", "a", "b"]),
        b"*1\r\n$1\r\na\r\n"
    );
    assert_bytes!(
        c.cmd(&["COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"]),
        b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    );
    assert_bytes!(
        c.cmd(&["COMMAND", "GETKEYS", "get", "a"]),
        b"*1\r\n$1\r\na\r\n"
    );
    assert_bytes!(
        c.cmd(&["COMMAND", "GETKEYS", "foo", "a"]),
        b"-ERR Invalid command specified\r\n"
    );
    assert_bytes!(
        c.cmd(&["COMMAND", "GETKEYS", "ping", "a"]),
        b"-ERR The command has no key arguments\r\n"
    );
    assert_bytes!(
        c.cmd(&["COMMAND", "GETKEYS", "get", "a", "b"]),
        b"-ERR Invalid number of arguments specified for command\r\n"
    );
    assert_bytes!(
        c.cmd(&["COMMAND", "GETKEYS", "get"]),
        b"-ERR wrong number of arguments for 'command|getkeys' command\r\n"
    );
    // Commands whose keys move with their arguments: a numkeys count, SORT's STORE.
    let cases: &[(&str, &[&str])] = &[
        ("ZUNIONSTORE d 2 a b", &["d", "a", "b"]),
        ("ZUNIONSTORE d 1 a b", &["d", "a"]),
        ("ZUNION 2 a b WITHSCORES", &["a", "b"]),
        ("SINTERCARD 2 a b LIMIT 1", &["a", "b"]),
        ("LMPOP 2 a b LEFT", &["a", "b"]),
        ("BLMPOP 0 2 a b LEFT", &["a", "b"]),
        ("BZMPOP 0 1 a MIN", &["a"]),
        ("SORT k BY w_* GET x STORE d", &["k", "d"]),
        ("SORT k STORE d STORE e", &["k", "e"]),
        ("SORT k LIMIT STORE d 1 STORE f", &["k", "f"]),
        ("SORT k STORE", &["k"]),
        ("SORT_RO k STORE d", &["k"]),
    ];
    for (cmd, keys) in cases {
        let mut args = vec!["COMMAND", "GETKEYS"];
        args.extend(cmd.split(' '));
        let want: Vec<Resp> = keys.iter().map(|k| Resp::Bulk(k.as_bytes().to_vec())).collect();
        assert_eq!(parse(&c.cmd(&args)), Resp::Array(want), "{cmd}");
    }
    for cmd in ["ZUNIONSTORE d 3 a b", "ZUNIONSTORE d x a b", "ZUNION 0 a", "LMPOP -1 a LEFT"] {
        let mut args = vec!["COMMAND", "GETKEYS"];
        args.extend(cmd.split(' '));
        assert_bytes!(c.cmd(&args), b"-ERR Invalid arguments specified for command\r\n");
    }
    // COMMAND INFO flags them movablekeys.
    for name in ["zunionstore", "zunion", "lmpop", "sort", "sort_ro", "sintercard"] {
        let info = parse(&c.cmd(&["COMMAND", "INFO", name]));
        let flags: Vec<String> = info.items()[0].items()[2].items().iter().map(|f| f.text()).collect();
        assert!(flags.contains(&"movablekeys".to_string()), "{name}: {flags:?}");
    }
}

#[test]
fn time_command() {
    let t = shared();
    let mut c = t.raw_conn();
    let r = parse(&c.cmd(&["TIME"]));
    let items = r.items();
    assert_eq!(items.len(), 2);
    assert!(
        matches!(items[0], Resp::Bulk(_)) && matches!(items[1], Resp::Bulk(_)),
        "{r:?}"
    );
    let secs: i64 = items[0].text().parse().expect("seconds");
    let micros: i64 = items[1].text().parse().expect("micros");
    assert!(
        (secs - unix_now()).abs() <= 5,
        "server time {secs} vs {}",
        unix_now()
    );
    assert!((0..1_000_000).contains(&micros));
    assert_bytes!(
        c.cmd(&["TIME", "x"]),
        b"-ERR wrong number of arguments for 'time' command\r\n"
    );
}

#[test]
fn slowlog_basic_replies() {
    let t = shared();
    let mut c = t.raw_conn();
    assert!(matches!(parse(&c.cmd(&["SLOWLOG", "LEN"])), Resp::Int(n) if n >= 0));
    assert!(matches!(parse(&c.cmd(&["SLOWLOG", "GET"])), Resp::Array(_)));
    assert!(matches!(
        parse(&c.cmd(&["SLOWLOG", "GET", "1"])),
        Resp::Array(_)
    ));
    assert_bytes!(
        c.cmd(&["SLOWLOG", "GET", "x"]),
        b"-ERR count should be greater than or equal to -1\r\n"
    );
    assert_bytes!(
        c.cmd(&["SLOWLOG", "FOO"]),
        b"-ERR unknown subcommand 'FOO'. Try SLOWLOG HELP.\r\n"
    );
}

#[test]
fn slowlog_records_commands() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["SLOWLOG", "RESET"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "SETNAME", "slowpoke"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "slowkey", "slowvalue"]), b"+OK\r\n");
    let len = parse(&c.cmd(&["SLOWLOG", "LEN"])).int();
    assert!(len >= 2, "len {len}");
    let r = parse(&c.cmd(&["SLOWLOG", "GET", "-1"]));
    let entries = r.items();
    // Newest first; find our SET.
    let set = entries
        .iter()
        .find(|e| {
            e.items()[3]
                .items()
                .first()
                .map(|a| a.text().to_lowercase())
                == Some("set".into())
        })
        .unwrap_or_else(|| panic!("SET not in slowlog: {r:?}"));
    let e = set.items();
    assert_eq!(e.len(), 6, "{set:?}");
    assert!(e[0].int() >= 0);
    assert!((e[1].int() - unix_now()).abs() <= 5);
    assert!(e[2].int() >= 0);
    let args: Vec<String> = e[3].items().iter().map(|a| a.text()).collect();
    // Arguments are logged as sent (case preserved).
    assert_eq!(args, ["SET", "slowkey", "slowvalue"]);
    let local = c.stream.local_addr().expect("local").to_string();
    assert_eq!(e[4].text(), local);
    assert_eq!(e[5].text(), "slowpoke");
    let ids: Vec<i64> = entries.iter().map(|e| e.items()[0].int()).collect();
    assert!(
        ids.windows(2).all(|w| w[0] > w[1]),
        "ids must be descending: {ids:?}"
    );
    assert_eq!(parse(&c.cmd(&["SLOWLOG", "GET", "1"])).items().len(), 1);
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "10000000"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["SLOWLOG", "RESET"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SLOWLOG", "LEN"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SLOWLOG", "GET"]), b"*0\r\n");
}

/// The slow log hides secrets as Redis 7.0 does (and MONITOR): AUTH's arguments, HELLO's
/// AUTH user and password, the values CONFIG SET gives masterauth / masteruser /
/// requirepass, ACL SETUSER's arguments.
#[test]
fn slowlog_hides_passwords() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SLOWLOG", "RESET"]), b"+OK\r\n");
    let _ = c.cmd(&["AUTH", "secret-a"]);
    let _ = c.cmd(&["AUTH", "someone", "secret-b"]);
    let _ = c.cmd(&["HELLO", "2", "AUTH", "default", "secret-c"]);
    assert_bytes!(c.cmd(&["CONFIG", "SET", "masterauth", "secret-d", "maxmemory-samples", "5"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ACL", "SETUSER", "slowlog-user", "on", ">secret-e"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ACL", "DELUSER", "slowlog-user"]), b":1\r\n");
    assert_bytes!(c.cmd(&["CONFIG", "SET", "masterauth", ""]), b"+OK\r\n");
    let r = parse(&c.cmd(&["SLOWLOG", "GET", "-1"]));
    let logged: Vec<String> = r.items().iter().rev().map(|e| e.items()[3].items().iter().map(|a| a.text()).collect::<Vec<_>>().join(" ")).collect();
    assert!(!logged.iter().any(|l| l.contains("secret")), "{logged:?}");
    for line in [
        "AUTH (redacted)",
        "AUTH (redacted) (redacted)",
        "HELLO 2 AUTH (redacted) (redacted)",
        "CONFIG SET masterauth (redacted) maxmemory-samples 5",
        "ACL SETUSER (redacted) (redacted) (redacted)",
        "ACL DELUSER slowlog-user",
    ] {
        assert!(logged.iter().any(|l| l == line), "{line:?} not in {logged:?}");
    }
    assert_bytes!(c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "10000"]), b"+OK\r\n");
}

/// DEBUG DIGEST and DIGEST-VALUE are Redis's signatures (the values below are Redis
/// 7.0.15's for the same data); DEBUG PROTOCOL answers Redis's test value of each type,
/// in RESP2 and RESP3; DEBUG ERROR answers its text as the error.
#[test]
fn debug_digest_protocol_and_error() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["FLUSHALL"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "DIGEST"]), b"+0000000000000000000000000000000000000000\r\n");
    assert_bytes!(c.cmd(&["SET", "a", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "DIGEST"]), b"+943d800368fb9c0e951138f1bc0e313ac769d91f\r\n");
    assert_bytes!(
        c.cmd(&["DEBUG", "DIGEST-VALUE", "a", "missing"]),
        b"*2\r\n+b4fc66738120fba0b5aa500ab5c2bf89cea1c5da\r\n+0000000000000000000000000000000000000000\r\n"
    );
    // A value stored as an integer and the same text built otherwise digest alike.
    assert_bytes!(c.cmd(&["SET", "int", "12"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "raw", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["APPEND", "raw", "2"]), b":2\r\n");
    let both = parse(&c.cmd(&["DEBUG", "DIGEST-VALUE", "int", "raw"]));
    assert_eq!(both.items()[0], both.items()[1]);
    assert_bytes!(c.cmd(&["FLUSHALL"]), b"+OK\r\n");
    for (kind, resp2, resp3) in [
        ("string", &b"$11\r\nHello World\r\n"[..], &b"$11\r\nHello World\r\n"[..]),
        ("integer", b":12345\r\n", b":12345\r\n"),
        ("double", b"$5\r\n3.141\r\n", b",3.141\r\n"),
        ("bignum", b"$37\r\n1234567999999999999999999999999999999\r\n", b"(1234567999999999999999999999999999999\r\n"),
        ("null", b"$-1\r\n", b"_\r\n"),
        ("array", b"*3\r\n:0\r\n:1\r\n:2\r\n", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
        ("set", b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
        ("map", b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n", b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
        ("attrib", b"$39\r\nSome real reply following the attribute\r\n", b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n"),
        ("push", b"-ERR RESP2 is not supported by this command\r\n", b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n"),
        ("verbatim", b"$25\r\nThis is a verbatim\nstring\r\n", b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
        ("true", b":1\r\n", b"#t\r\n"),
        ("false", b":0\r\n", b"#f\r\n"),
    ] {
        let mut c3 = t.raw_conn();
        let _ = c3.cmd(&["HELLO", "3"]);
        assert_bytes!(c.cmd(&["DEBUG", "PROTOCOL", kind]), resp2);
        // A push (or an attribute) and the reply after it: two frames.
        let mut got = c3.cmd(&["DEBUG", "PROTOCOL", kind]);
        if kind == "push" {
            got.extend(c3.read_reply());
        }
        assert_bytes!(got, resp3);
    }
    assert_bytes!(
        c.cmd(&["DEBUG", "PROTOCOL", "nope"]),
        b"-ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n"
    );
    assert_bytes!(c.cmd(&["DEBUG", "ERROR", "CODE some text"]), b"-CODE some text\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "LOG", "hello from a test"]), b"+OK\r\n");
}

#[test]
fn debug_sleep_and_object() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["DEBUG", "SLEEP", "0"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "SLEEP", "0.01"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "srv_dbgobj:k", "hello"]), b"+OK\r\n");
    let r = c.cmd(&["DEBUG", "OBJECT", "srv_dbgobj:k"]);
    assert!(r.starts_with(b"+Value at:"), "{}", show(&r));
    let s = parse(&r).text();
    for part in [
        "refcount:",
        "encoding:embstr",
        "serializedlength:",
        "lru:",
        "lru_seconds_idle:",
    ] {
        assert!(s.contains(part), "{part} missing in {s}");
    }
    assert_bytes!(
        c.cmd(&["DEBUG", "OBJECT", "srv_dbgobj:none"]),
        b"-ERR no such key\r\n"
    );
    let r = c.cmd(&["DEBUG", "FOO"]);
    assert_bytes!(
        r,
        b"-ERR unknown subcommand or wrong number of arguments for 'FOO'. Try DEBUG HELP.\r\n"
    );
}

#[test]
fn debug_populate() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["DEBUG", "POPULATE", "3", "srv_pop"]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["MGET", "srv_pop:0", "srv_pop:1", "srv_pop:2", "srv_pop:3"]),
        b"*4\r\n$7\r\nvalue:0\r\n$7\r\nvalue:1\r\n$7\r\nvalue:2\r\n$-1\r\n"
    );
    // With a size, values are truncated or zero-padded.
    assert_bytes!(
        c.cmd(&["DEBUG", "POPULATE", "2", "srv_pop_s", "10"]),
        b"+OK\r\n"
    );
    assert_bytes!(
        c.cmd(&["GET", "srv_pop_s:0"]),
        b"$10\r\nvalue:0\x00\x00\x00\r\n"
    );
    assert_bytes!(
        c.cmd(&["DEBUG", "POPULATE", "2", "srv_pop_t", "3"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["GET", "srv_pop_t:1"]), b"$3\r\nval\r\n");
    // Existing keys are left alone.
    assert_bytes!(c.cmd(&["SET", "srv_pop_e:0", "mine"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "POPULATE", "2", "srv_pop_e"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", "srv_pop_e:0"]), b"$4\r\nmine\r\n");
    assert_bytes!(c.cmd(&["GET", "srv_pop_e:1"]), b"$7\r\nvalue:1\r\n");
    assert_bytes!(
        c.cmd(&["DEBUG", "POPULATE", "-1"]),
        b"-ERR value is out of range, must be positive\r\n"
    );
    assert_bytes!(
        c.cmd(&["DEBUG", "POPULATE", "x"]),
        b"-ERR value is out of range, must be positive\r\n"
    );
}

#[test]
fn debug_populate_default_prefix() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["DEBUG", "POPULATE", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":100\r\n");
    assert_bytes!(c.cmd(&["GET", "key:42"]), b"$8\r\nvalue:42\r\n");
}

#[test]
fn redis_rs_server_commands() {
    let mut c = conn();
    let info: String = q(&mut c, &["INFO", "server"]);
    assert!(info.contains("redis_version:"));
    let cfg: HashMap<String, String> = q(&mut c, &["CONFIG", "GET", "databases"]);
    assert_eq!(cfg.get("databases").map(|s| s.as_str()), Some("16"));
    let (secs, _micros): (i64, i64) = q(&mut c, &["TIME"]);
    assert!((secs - unix_now()).abs() <= 5);
}

#[test]
fn command_docs_describe_arguments() {
    let t = shared();
    let mut c = t.raw_conn();
    let r = parse(&c.cmd(&["COMMAND", "DOCS", "get"]));
    let pairs = r.pairs();
    assert!(pairs[0].1.get("arguments").is_some());
}

#[test]
fn memory_usage() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["MEMORY", "USAGE", "srv_mem:none"]), b"$-1\r\n");
    let big = "x".repeat(1000);
    assert_bytes!(c.cmd(&["SET", "srv_mem:big", &big]), b"+OK\r\n");
    let r = c.cmd(&["MEMORY", "USAGE", "srv_mem:big"]);
    let n: i64 = std::str::from_utf8(&r[1..r.len() - 2]).expect("utf8").parse().expect("integer reply");
    assert!(r[0] == b':' && (1000..4096).contains(&n), "{:?}", String::from_utf8_lossy(&r));
    assert_bytes!(c.cmd(&["MEMORY", "USAGE", "srv_mem:big", "SAMPLE", "1"]), b"-ERR syntax error\r\n");
    // SAMPLES: a non-negative integer, repeatable (the last wins), checked before the key.
    assert_bytes!(c.cmd(&["MEMORY", "USAGE", "srv_mem:big", "SAMPLES", "-1"]), b"-ERR syntax error\r\n");
    assert_bytes!(c.cmd(&["MEMORY", "USAGE", "srv_mem:none", "SAMPLES", "-1"]), b"-ERR syntax error\r\n");
    assert_bytes!(
        c.cmd(&["MEMORY", "USAGE", "srv_mem:big", "SAMPLES", "x"]),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_bytes!(c.cmd(&["MEMORY", "USAGE", "srv_mem:big", "SAMPLES", "1", "SAMPLES"]), b"-ERR syntax error\r\n");
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "srv_mem:big", "SAMPLES", "1", "SAMPLES", "0"]), r);
    assert_bytes!(c.cmd(&["DEL", "srv_mem:big"]), b":1\r\n");
}

/// A large collection is estimated from a few members (Redis samples 5 by default; 0
/// means all of them): with members of one size the estimate is close to the full walk.
#[test]
fn memory_usage_samples_large_collections() {
    let t = shared();
    let mut c = t.raw_conn();
    let usage = |c: &mut RawConn, key: &str, samples: &str| -> i64 {
        let r = c.cmd(&["MEMORY", "USAGE", key, "SAMPLES", samples]);
        std::str::from_utf8(&r[1..r.len() - 2]).expect("utf8").parse().unwrap_or_else(|_| panic!("{:?}", String::from_utf8_lossy(&r)))
    };
    let n = 3000;
    let member = |i: usize| format!("member-of-forty-bytes-{i:018}");
    for (key, add) in [("srv_mem:{s}set", "SADD"), ("srv_mem:{s}zset", "ZADD"), ("srv_mem:{s}hash", "HSET")] {
        for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
            let mut args = vec![add.to_string(), key.to_string()];
            for &i in chunk {
                if add == "ZADD" {
                    args.push(i.to_string());
                }
                args.push(member(i));
                if add == "HSET" {
                    args.push(format!("value-{i:010}"));
                }
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            c.cmd(&args);
        }
        let all = usage(&mut c, key, "0");
        for samples in ["5", "1", "100"] {
            let estimate = usage(&mut c, key, samples);
            let ratio = estimate as f64 / all as f64;
            // Redis's skiplist nodes have random levels, so a sample of one or five of
            // them can be 30% off there (seen 1.31 for SAMPLES 1 in a CI run); Basalt's
            // members of one size give a close estimate from any sample.
            let tolerance = match (is_basalt(), samples) {
                (true, _) | (false, "100") => 0.1,
                (false, "5") => 0.25,
                (false, _) => 0.6,
            };
            assert!((ratio - 1.0).abs() <= tolerance, "{key}: SAMPLES {samples} gave {estimate}, all {all}");
        }
        assert!(all > (n * 40) as i64, "{key}: {all} bytes for {n} members of 40 bytes");
        assert_bytes!(c.cmd(&["DEL", key]), b":1\r\n");
    }
}

/// Polls INFO memory until `lazyfreed_objects` reaches `want` (bounded), then checks
/// that nothing is pending.
fn wait_lazyfreed(c: &mut RawConn, want: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let f = info_fields(&info(c, &["memory"]));
        let freed: u64 = f["lazyfreed_objects"].parse().expect("a count");
        if freed >= want {
            assert_eq!(freed, want, "more values freed in the background than handed over");
            assert_eq!(f["lazyfree_pending_objects"], "0");
            return;
        }
        assert!(std::time::Instant::now() < deadline, "lazyfreed_objects stayed at {freed}, want {want}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// UNLINK frees a large collection in the background (INFO's lazyfreed_objects counts
/// it) and a small one at once; DEL frees synchronously unless lazyfree-lazy-user-del.
#[test]
fn unlink_frees_large_values_in_the_background() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let big = |c: &mut RawConn, k: &str| {
        let mut args: Vec<String> = vec!["SADD".into(), k.into()];
        args.extend((0..1000).map(|i| format!("m{i}")));
        assert_bytes!(c.cmd(&args), b":1000\r\n");
    };
    big(&mut c, "lazy:big1");
    assert_bytes!(c.cmd(&["SADD", "lazy:small", "a", "b", "c"]), b":3\r\n");
    assert_bytes!(c.cmd(&["UNLINK", "lazy:big1", "lazy:small", "lazy:none"]), b":2\r\n");
    wait_lazyfreed(&mut c, 1);
    big(&mut c, "lazy:big2");
    assert_bytes!(c.cmd(&["DEL", "lazy:big2"]), b":1\r\n");
    wait_lazyfreed(&mut c, 1);
    assert_bytes!(c.cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]), b"+OK\r\n");
    assert_eq!(config_get(&mut c, &["lazyfree-lazy-user-del"])["lazyfree-lazy-user-del"], "yes");
    big(&mut c, "lazy:big3");
    assert_bytes!(c.cmd(&["DEL", "lazy:big3"]), b":1\r\n");
    wait_lazyfreed(&mut c, 2);
    assert_bytes!(c.cmd(&["EXISTS", "lazy:big1", "lazy:big2", "lazy:big3", "lazy:small"]), b":0\r\n");
}

/// MEMORY STATS lays its figures out as Redis 7.0.15 does (names, order, integers and
/// ratios), with one map per database that holds keys; DOCTOR answers an (almost) empty
/// instance with Redis's text; PURGE says OK.
#[test]
fn memory_stats_doctor_and_purge_as_redis() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "a", "1"]), b"+OK\r\n");
    let stats = parse(&c.cmd(&["MEMORY", "STATS"]));
    let items = stats.items();
    let names: Vec<String> = items.iter().step_by(2).map(|n| n.text()).collect();
    assert_eq!(
        names,
        [
            "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog", "clients.slaves",
            "clients.normal", "cluster.links", "aof.buffer", "lua.caches", "functions.caches", "db.0", "overhead.total",
            "keys.count", "keys.bytes-per-key", "dataset.bytes", "dataset.percentage", "peak.percentage",
            "allocator.allocated", "allocator.active", "allocator.resident", "allocator-fragmentation.ratio",
            "allocator-fragmentation.bytes", "allocator-rss.ratio", "allocator-rss.bytes", "rss-overhead.ratio",
            "rss-overhead.bytes", "fragmentation", "fragmentation.bytes",
        ]
    );
    let db0: Vec<String> = items[21].items().iter().step_by(2).map(|n| n.text()).collect();
    assert_eq!(db0, ["overhead.hashtable.main", "overhead.hashtable.expires", "overhead.hashtable.slot-to-keys"]);
    assert_eq!(items[25].int(), 1, "keys.count");
    assert!(items[3].int() > 0, "total.allocated");
    let doctor = String::from_utf8_lossy(&c.cmd(&["MEMORY", "DOCTOR"])).to_string();
    assert!(doctor.contains("Hi Sam, this instance is empty or is using very little memory"), "{doctor}");
    assert_bytes!(c.cmd(&["MEMORY", "PURGE"]), b"+OK\r\n");
    let report = String::from_utf8_lossy(&c.cmd(&["MEMORY", "MALLOC-STATS"])).to_string();
    assert!(report.contains("jemalloc"), "{}", &report[..report.len().min(200)]);
}

/// Issue 26: `rename-command` as Redis 7.0.15: a command renamed to "" is gone, one
/// renamed answers to its new name only (COMMAND INFO shows its own name); an unknown
/// command or a name taken stops the start with Redis's message.
#[test]
fn rename_command_hides_and_renames() {
    let Some(t) = exclusive_with_args(&["--rename-command", "config", "", "--rename-command", "get", "fetch"]) else { return };
    let mut c = t.raw_conn();
    assert_eq!(
        reply_text(&c.cmd(&["CONFIG", "GET", "port"])),
        "-ERR unknown command 'CONFIG', with args beginning with: 'GET' 'port' \r\n"
    );
    assert_bytes!(c.cmd(&["SET", "a", "1"]), b"+OK\r\n");
    assert_eq!(reply_text(&c.cmd(&["GET", "a"])), "-ERR unknown command 'GET', with args beginning with: 'a' \r\n");
    assert_bytes!(c.cmd(&["FETCH", "a"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["fetch", "a"]), b"$1\r\n1\r\n");
    let info = parse(&c.cmd(&["COMMAND", "INFO", "fetch"]));
    assert_eq!(info.items()[0].items()[0].text(), "get");
    // Inside a transaction too.
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["FETCH", "a"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n$1\r\n1\r\n");
    let Some(bin) = server_binary() else { return };
    for (args, reason) in [
        (["--rename-command", "nosuch", "foo"], "No such command in rename-command"),
        (["--rename-command", "get", "set"], "Target command name already exists"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let failed = start_expect_exit(bin, dir.path(), &args, std::time::Duration::from_secs(10));
        assert!(failed.log.contains(reason), "{reason} not in:\n{}", failed.log);
    }
}

/// ROLE of a master without replicas, byte for byte as Redis 7.0.15 answers it (a
/// client's probe for the master: Basalt does not replicate yet, issue 24).
#[test]
fn role_of_a_master_without_replicas() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_eq!(c.cmd(&["ROLE"]), b"*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
    assert!(c.cmd(&["ROLE", "x"]).starts_with(b"-ERR wrong number of arguments for 'role' command"));
}
