//! How a YCSB record is kept in each Redis data type (`basalt.datatype`), and the
//! commands each operation sends for it: `hash` is YCSB's Redis binding exactly; the
//! others are the Tair whitepaper's data-type groups (issue 25).
//!
//! A record is `fieldcount` values of `fieldlength` bytes (a string record is one value):
//!
//! | type | insert | update (one value) | update (all) | read |
//! |---|---|---|---|---|
//! | hash | `HMSET k f0 v0 ..` | `HMSET k fi v` | `HMSET k f0 v0 ..` | `HGETALL k` (`HMGET k fi`) |
//! | string | `SET k v` | `SET k v` | `SET k v` | `GET k` |
//! | list | `RPUSH k v0 ..`, `LTRIM k -n -1` | `LSET k i v` | `RPUSH k v0 ..`, `LTRIM k -n -1` | `LRANGE k 0 -1` |
//! | set | `SADD k v0 ..` | `SADD k v`, `SPOP k` | `DEL k`, `SADD k v0 ..` | `SMEMBERS k` |
//! | zset | `ZADD k s0 v0 ..` | `ZADD k s v`, `ZPOPMIN k` | `DEL k`, `ZADD k s0 v0 ..` | `ZRANGE k 0 -1 WITHSCORES` |
//!
//! So every collection keeps `fieldcount` elements (a list is trimmed to its last `n`;
//! a set or sorted set gains one member and loses one), and a value's size is the size
//! of each element. The commands of one operation go one after another; the operation's
//! latency covers them all.

/// The data type that holds a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataType {
    /// YCSB's Redis binding: a hash of fields.
    Hash,
    /// One string value.
    String,
    /// A list of values.
    List,
    /// A set of values.
    Set,
    /// A sorted set of values with random scores.
    ZSet,
}

/// Every type, in the whitepaper's order.
pub const ALL: [DataType; 5] = [DataType::String, DataType::Hash, DataType::List, DataType::Set, DataType::ZSet];

impl DataType {
    /// From `basalt.datatype`.
    pub fn parse(s: &str) -> Result<DataType, String> {
        match s.to_ascii_lowercase().as_str() {
            "hash" => Ok(DataType::Hash),
            "string" => Ok(DataType::String),
            "list" => Ok(DataType::List),
            "set" => Ok(DataType::Set),
            "zset" => Ok(DataType::ZSet),
            _ => Err(format!("Unknown basalt.datatype \"{s}\" (hash, string, list, set, zset)")),
        }
    }

    /// Its name as the property spells it.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Hash => "hash",
            DataType::String => "string",
            DataType::List => "list",
            DataType::Set => "set",
            DataType::ZSet => "zset",
        }
    }
}

/// A command: its arguments.
pub type Command = Vec<Vec<u8>>;

/// What a write does to the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// A new record, every value.
    Insert,
    /// Value `i` replaced.
    One(usize),
    /// Every value replaced.
    All,
}

/// The commands of a read of `key` (`field`: one field, hash only; other types read
/// the whole record).
pub fn read(dt: DataType, key: &[u8], field: Option<&[u8]>) -> Command {
    let k = key.to_vec();
    match (dt, field) {
        (DataType::Hash, None) => vec![b"HGETALL".to_vec(), k],
        (DataType::Hash, Some(f)) => vec![b"HMGET".to_vec(), k, f.to_vec()],
        (DataType::String, _) => vec![b"GET".to_vec(), k],
        (DataType::List, _) => vec![b"LRANGE".to_vec(), k, b"0".to_vec(), b"-1".to_vec()],
        (DataType::Set, _) => vec![b"SMEMBERS".to_vec(), k],
        (DataType::ZSet, _) => vec![b"ZRANGE".to_vec(), k, b"0".to_vec(), b"-1".to_vec(), b"WITHSCORES".to_vec()],
    }
}

/// Whether a read's reply found the record (an error, a null or an empty collection
/// did not: YCSB's binding reports those as ERROR).
pub fn read_found(reply: &[u8]) -> bool {
    !(reply.starts_with(b"-")
        || reply.starts_with(b"$-1")
        || reply.starts_with(b"_")
        || reply.starts_with(b"*0\r\n")
        || reply.starts_with(b"~0\r\n")
        || reply.starts_with(b"%0\r\n"))
}

/// The commands of a write of `values` (each value's field name in `names`, for the
/// hash; a score per value in `scores`, for the sorted set) to `key`.
pub fn write(dt: DataType, key: &[u8], w: Write, names: &[Vec<u8>], values: &[Vec<u8>], scores: &[u64]) -> Vec<Command> {
    let k = key.to_vec();
    let n = names.len().max(1);
    let with = |cmd: &[u8], extra: &mut dyn FnMut(&mut Command)| -> Command {
        let mut c = vec![cmd.to_vec(), k.clone()];
        extra(&mut c);
        c
    };
    let all_values = |c: &mut Command| c.extend(values.iter().cloned());
    let scored = |c: &mut Command| {
        for (v, s) in values.iter().zip(scores) {
            c.push(itoa::Buffer::new().format(*s).as_bytes().to_vec());
            c.push(v.clone());
        }
    };
    match (dt, w) {
        (DataType::Hash, Write::One(i)) => {
            vec![with(b"HMSET", &mut |c| {
                c.push(names[i].clone());
                c.push(values[0].clone());
            })]
        }
        (DataType::Hash, _) => vec![with(b"HMSET", &mut |c| {
            for (f, v) in names.iter().zip(values) {
                c.push(f.clone());
                c.push(v.clone());
            }
        })],
        (DataType::String, _) => vec![with(b"SET", &mut |c| c.push(values[0].clone()))],
        (DataType::List, Write::One(i)) => {
            vec![with(b"LSET", &mut |c| {
                c.push(itoa::Buffer::new().format(i).as_bytes().to_vec());
                c.push(values[0].clone());
            })]
        }
        (DataType::List, _) => {
            let neg = format!("-{n}").into_bytes();
            vec![with(b"RPUSH", &mut |c| all_values(c)), vec![b"LTRIM".to_vec(), k.clone(), neg, b"-1".to_vec()]]
        }
        (DataType::Set, Write::Insert) => vec![with(b"SADD", &mut |c| all_values(c))],
        (DataType::Set, Write::One(_)) => vec![with(b"SADD", &mut |c| all_values(c)), vec![b"SPOP".to_vec(), k.clone()]],
        (DataType::Set, Write::All) => vec![vec![b"DEL".to_vec(), k.clone()], with(b"SADD", &mut |c| all_values(c))],
        (DataType::ZSet, Write::Insert) => vec![with(b"ZADD", &mut |c| scored(c))],
        (DataType::ZSet, Write::One(_)) => vec![with(b"ZADD", &mut |c| scored(c)), vec![b"ZPOPMIN".to_vec(), k.clone()]],
        (DataType::ZSet, Write::All) => vec![vec![b"DEL".to_vec(), k.clone()], with(b"ZADD", &mut |c| scored(c))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(cmds: &[Command]) -> Vec<String> {
        cmds.iter().map(|c| c.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>().join(" ")).collect()
    }

    #[test]
    fn each_type_keeps_its_record_bounded() {
        let names: Vec<Vec<u8>> = vec![b"field0".to_vec(), b"field1".to_vec()];
        let two: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec()];
        let one: Vec<Vec<u8>> = vec![b"c".to_vec()];
        assert_eq!(text(&write(DataType::Hash, b"k", Write::Insert, &names, &two, &[])), ["HMSET k field0 a field1 b"]);
        assert_eq!(text(&write(DataType::Hash, b"k", Write::One(1), &names, &one, &[])), ["HMSET k field1 c"]);
        assert_eq!(text(&write(DataType::String, b"k", Write::Insert, &names, &one, &[])), ["SET k c"]);
        assert_eq!(text(&write(DataType::List, b"k", Write::Insert, &names, &two, &[])), ["RPUSH k a b", "LTRIM k -2 -1"]);
        assert_eq!(text(&write(DataType::List, b"k", Write::One(1), &names, &one, &[])), ["LSET k 1 c"]);
        assert_eq!(text(&write(DataType::Set, b"k", Write::One(0), &names, &one, &[])), ["SADD k c", "SPOP k"]);
        assert_eq!(text(&write(DataType::Set, b"k", Write::All, &names, &two, &[])), ["DEL k", "SADD k a b"]);
        assert_eq!(text(&write(DataType::ZSet, b"k", Write::Insert, &names, &two, &[5, 7])), ["ZADD k 5 a 7 b"]);
        assert_eq!(text(&write(DataType::ZSet, b"k", Write::One(0), &names, &one, &[9])), ["ZADD k 9 c", "ZPOPMIN k"]);
        assert_eq!(text(&[read(DataType::ZSet, b"k", None)]), ["ZRANGE k 0 -1 WITHSCORES"]);
        assert_eq!(text(&[read(DataType::Hash, b"k", Some(b"field1"))]), ["HMGET k field1"]);
    }

    #[test]
    fn a_missing_record_is_not_found() {
        for miss in [&b"$-1\r\n"[..], b"*0\r\n", b"-WRONGTYPE x\r\n", b"_\r\n", b"~0\r\n"] {
            assert!(!read_found(miss), "{miss:?}");
        }
        assert!(read_found(b"$1\r\na\r\n") && read_found(b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"));
    }
}
