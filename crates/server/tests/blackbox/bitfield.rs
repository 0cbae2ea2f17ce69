//! BITFIELD and BITFIELD_RO. Every expected reply is Redis 7.0.15's byte for byte; the
//! differential test (`tests/py/test_differential.py`) also sends random BITFIELDs to
//! both servers.

use crate::assert_bytes;
use crate::harness::*;

#[test]
fn set_get_incrby_at_any_offset() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "bf_basic:k";
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "SET", "u8", "0", "255", "GET", "u8", "0"]),
        b"*2\r\n:0\r\n:255\r\n"
    );
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\n\xff\r\n");
    // A signed field across a byte boundary, and the #n form (n times the width).
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "SET", "i12", "#1", "-100", "GET", "i12", "12", "GET", "u12", "12"]),
        b"*3\r\n:0\r\n:-100\r\n:3996\r\n"
    );
    assert_bytes!(c.cmd(&["STRLEN", k]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "INCRBY", "i12", "#1", "150", "GET", "i64", "0"]),
        b"*2\r\n:50\r\n:-72002618456539136\r\n"
    );
    // Past the end reads zeros and creates nothing.
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "GET", "u32", "1000"]),
        b"*1\r\n:0\r\n"
    );
    assert_bytes!(c.cmd(&["STRLEN", k]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["BITFIELD", "bf_basic:missing", "GET", "i8", "0"]),
        b"*1\r\n:0\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", "bf_basic:missing"]), b":0\r\n");
    assert_bytes!(c.cmd(&["BITFIELD", k]), b"*0\r\n");
    // An integer-encoded string is read as its digits.
    assert_bytes!(c.cmd(&["SET", k, "123"]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["BITFIELD_RO", k, "GET", "u8", "0", "GET", "u16", "#1"]),
        b"*2\r\n:49\r\n:13056\r\n"
    );
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "SET", "u8", "#0", "50"]),
        b"*1\r\n:49\r\n"
    );
    assert_bytes!(c.cmd(&["GET", k]), b"$3\r\n223\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn overflow_modes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "bf_overflow:k";
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "SET", "u8", "0", "250", "INCRBY", "u8", "0", "10"]),
        b"*2\r\n:0\r\n:4\r\n"
    );
    assert_bytes!(
        c.cmd(&[
            "BITFIELD", k, "OVERFLOW", "SAT", "INCRBY", "u8", "0", "300", "INCRBY", "u8", "0",
            "-1000"
        ]),
        b"*2\r\n:255\r\n:0\r\n"
    );
    // FAIL: a null and no change; the mode holds for the operations after it.
    assert_bytes!(
        c.cmd(&[
            "BITFIELD", k, "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "-1", "SET", "i8", "0", "200",
            "INCRBY", "u8", "0", "7"
        ]),
        b"*3\r\n$-1\r\n$-1\r\n:7\r\n"
    );
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "OVERFLOW", "WRAP", "SET", "i8", "0", "200", "GET", "i8", "0"]),
        b"*2\r\n:7\r\n:-56\r\n"
    );
    assert_bytes!(
        c.cmd(&[
            "BITFIELD", k, "OVERFLOW", "sat", "SET", "i8", "0", "-200", "SET", "u4", "0", "-1",
            "GET", "u8", "0"
        ]),
        b"*3\r\n:-56\r\n:8\r\n:240\r\n"
    );
    // 64-bit signed ends.
    assert_bytes!(
        c.cmd(&[
            "BITFIELD",
            k,
            "SET",
            "i64",
            "0",
            "9223372036854775807",
            "INCRBY",
            "i64",
            "0",
            "1",
            "OVERFLOW",
            "SAT",
            "INCRBY",
            "i64",
            "0",
            "-1"
        ]),
        b"*3\r\n:-1152921504606846976\r\n:-9223372036854775808\r\n:-9223372036854775808\r\n"
    );
    // A write refused by FAIL still creates the key, zero-filled to its field, as Redis.
    let n = "bf_overflow:new";
    assert_bytes!(
        c.cmd(&["BITFIELD", n, "OVERFLOW", "FAIL", "SET", "u2", "20", "5"]),
        b"*1\r\n$-1\r\n"
    );
    assert_bytes!(c.cmd(&["GET", n]), b"$3\r\n\x00\x00\x00\r\n");
    assert_bytes!(c.cmd(&["DEL", k, n]), b":2\r\n");
}

#[test]
fn errors_in_redis_order() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "bf_errors:k";
    const TYPE: &[u8] = b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n";
    const OFFSET: &[u8] = b"-ERR bit offset is not an integer or out of range\r\n";
    const SYNTAX: &[u8] = b"-ERR syntax error\r\n";
    for bad in ["u64", "i65", "i0", "x8", "u", "I8", "u08", ""] {
        assert_bytes!(c.cmd(&["BITFIELD", k, "GET", bad, "0"]), TYPE);
    }
    for bad in ["-1", "x", "#-1", "4294967296", "#536870912"] {
        assert_bytes!(c.cmd(&["BITFIELD", k, "GET", "u8", bad]), OFFSET);
    }
    assert_bytes!(c.cmd(&["BITFIELD", k, "GET", "u64", "x"]), TYPE);
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "SET", "u8", "0", "x"]),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_bytes!(
        c.cmd(&["BITFIELD", k, "OVERFLOW", "BAD", "GET", "u8", "0"]),
        b"-ERR Invalid OVERFLOW type specified\r\n"
    );
    assert_bytes!(c.cmd(&["BITFIELD", k, "GET", "u8"]), SYNTAX);
    assert_bytes!(c.cmd(&["BITFIELD", k, "SET", "u8", "0"]), SYNTAX);
    assert_bytes!(c.cmd(&["BITFIELD", k, "OVERFLOW"]), SYNTAX);
    assert_bytes!(c.cmd(&["BITFIELD", k, "FOO", "u8", "0"]), SYNTAX);
    assert_bytes!(
        c.cmd(&["BITFIELD_RO", k, "GET", "u8", "0", "INCRBY", "u8", "0", "1"]),
        b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"
    );
    assert_bytes!(c.cmd(&["BITFIELD_RO", k, "OVERFLOW", "SAT"]), b"*0\r\n");
    // Nothing above created the key.
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    c.cmd(&["LPUSH", k, "x"]);
    const WRONGTYPE: &[u8] =
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    assert_bytes!(c.cmd(&["BITFIELD", k, "GET", "u8", "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BITFIELD", k, "SET", "u8", "0", "1"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BITFIELD_RO", k, "GET", "u8", "0"]), WRONGTYPE);
    // Arguments are checked before the type.
    assert_bytes!(c.cmd(&["BITFIELD", k, "GET", "u99", "0"]), TYPE);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}
