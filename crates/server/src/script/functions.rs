//! The function libraries (FUNCTION LOAD): what each holds, by name, shared by every
//! event loop.
//!
//! A library is its code and what its loading registered: functions with their flags
//! and descriptions. The set is replaced whole on each change (a new snapshot with the
//! next generation), so a reader takes one `Arc` and sees one consistent set; each
//! loop's Lua state loads the libraries again when the generation it holds is old
//! (`engine.rs`, which also runs a library's code to learn its functions:
//! [`check_library`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;

/// A function's flags, as `#!lua` functions declare them (`flags={...}`).
pub mod flag {
    pub const NO_WRITES: u8 = 1 << 0;
    pub const ALLOW_OOM: u8 = 1 << 1;
    pub const ALLOW_STALE: u8 = 1 << 2;
    pub const NO_CLUSTER: u8 = 1 << 3;
    pub const ALLOW_CROSS_SLOT_KEYS: u8 = 1 << 4;

    /// Names in the order FUNCTION LIST shows them (Redis 7.0's table order).
    pub const NAMES: &[(u8, &str)] = &[
        (NO_WRITES, "no-writes"),
        (ALLOW_OOM, "allow-oom"),
        (ALLOW_STALE, "allow-stale"),
        (NO_CLUSTER, "no-cluster"),
        (ALLOW_CROSS_SLOT_KEYS, "allow-cross-slot-keys"),
    ];
}

/// One registered function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: u8,
}

/// One library.
#[derive(Clone, Debug)]
pub struct Library {
    pub name: String,
    pub code: Arc<[u8]>,
    /// In the order the code registered them.
    pub functions: Vec<FunctionInfo>,
}

/// One consistent set of libraries.
#[derive(Default, Debug)]
pub struct Registry {
    pub generation: u64,
    /// By name (FUNCTION LIST lists them in this order; Redis's order is its hash
    /// table's, which differs from run to run).
    pub libraries: BTreeMap<String, Arc<Library>>,
}

impl Registry {
    /// The library holding function `name`, and the function.
    pub fn function(&self, name: &str) -> Option<(&Arc<Library>, &FunctionInfo)> {
        self.libraries.values().find_map(|lib| lib.functions.iter().find(|f| f.name == name).map(|f| (lib, f)))
    }

    pub fn function_count(&self) -> usize {
        self.libraries.values().map(|l| l.functions.len()).sum()
    }
}

/// What a load does when its library's name is taken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Refuse (FUNCTION LOAD, FUNCTION RESTORE's APPEND).
    Refuse,
    /// Replace the library of that name (REPLACE).
    Replace,
}

/// Every library, shared by the loops.
#[derive(Default)]
pub struct Functions {
    current: RwLock<Arc<Registry>>,
}

impl Functions {
    pub fn snapshot(&self) -> Arc<Registry> {
        self.current.read().clone()
    }

    /// The codes of every library, for a snapshot file or FUNCTION DUMP.
    pub fn codes(&self) -> Vec<Arc<[u8]>> {
        self.snapshot().libraries.values().map(|l| l.code.clone()).collect()
    }

    /// Adds libraries (already checked one by one) as one change: Err, with Redis's
    /// text, when a name is taken (per `on_conflict`) or a function name is another
    /// library's; then nothing changes.
    pub fn add(&self, libraries: Vec<Library>, on_conflict: OnConflict) -> Result<(), String> {
        let mut current = self.current.write();
        let mut next: BTreeMap<String, Arc<Library>> = current.libraries.clone();
        for lib in libraries {
            if next.contains_key(&lib.name) {
                if on_conflict == OnConflict::Refuse {
                    return Err(format!("ERR Library '{}' already exists", lib.name));
                }
                next.remove(&lib.name);
            }
            for f in &lib.functions {
                if next.values().any(|other| other.functions.iter().any(|g| g.name == f.name)) {
                    return Err(format!("ERR Function {} already exists", f.name));
                }
            }
            next.insert(lib.name.clone(), Arc::new(lib));
        }
        *current = Arc::new(Registry { generation: current.generation + 1, libraries: next });
        Ok(())
    }

    /// Removes a library: false when there is none of that name.
    pub fn delete(&self, name: &str) -> bool {
        let mut current = self.current.write();
        if !current.libraries.contains_key(name) {
            return false;
        }
        let mut next = current.libraries.clone();
        next.remove(name);
        *current = Arc::new(Registry { generation: current.generation + 1, libraries: next });
        true
    }

    /// Replaces every library with `libraries` (FLUSH, a snapshot file's set).
    pub fn replace_all(&self, libraries: Vec<Library>) {
        let mut current = self.current.write();
        let next = libraries.into_iter().map(|l| (l.name.clone(), Arc::new(l))).collect();
        *current = Arc::new(Registry { generation: current.generation + 1, libraries: next });
    }
}

/// Checks a library's code and learns its functions (FUNCTION LOAD and RESTORE, a
/// snapshot file's library): its metadata line, then its code run in this thread's Lua
/// state (`engine::load_library`). The library, or Redis's error text.
pub fn check_library(generation: u64, code: &[u8]) -> Result<Library, String> {
    let name = parse_metadata(code)?;
    let registered = super::engine::load_library(generation, code)?;
    let functions = registered
        .into_iter()
        .map(|r| FunctionInfo {
            name: r.name,
            description: r.description,
            flags: r.flags.iter().filter_map(|f| flag::NAMES.iter().find(|(_, n)| n == f).map(|(bit, _)| *bit)).fold(0, |a, b| a | b),
        })
        .collect();
    Ok(Library { name, code: code.into(), functions })
}

/// A library's metadata line, `#!<engine> name=<name>` (Redis's
/// functionExtractLibMetaData): the library's name, or Redis's error text.
pub fn parse_metadata(code: &[u8]) -> Result<String, String> {
    const INVALID: &str = "ERR Invalid library metadata";
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let Some(end) = code.iter().position(|&b| b == b'\n') else { return Err(INVALID.into()) };
    let line = String::from_utf8_lossy(&code[..end]);
    let mut parts = line.split_ascii_whitespace();
    let Some(engine) = parts.next() else { return Err(INVALID.into()) };
    let engine = &engine[2..];
    let mut name = None;
    for part in parts {
        // (Bytes: a slice of the text could cut a character in two.)
        if part.len() >= 5 && part.as_bytes()[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err("ERR Invalid metadata value, name argument was given multiple times".into());
            }
            name = Some(part[5..].to_string());
            continue;
        }
        return Err(format!("ERR Invalid metadata value given: {part}"));
    }
    let Some(name) = name else { return Err("ERR Library name was not given".into()) };
    if !valid_name(&name) {
        return Err(format!("ERR {BAD_NAME}"));
    }
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("ERR Engine '{engine}' not found"));
    }
    Ok(name)
}

/// Redis's text for a library or function name it refuses (for both, in 7.0).
pub const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// Letters, digits and underscores, at least one.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_read_as_redis_reads_it() {
        assert_eq!(parse_metadata(b"#!lua name=mylib\ncode"), Ok("mylib".into()));
        assert_eq!(parse_metadata(b"#!LUA NAME=x_1\n"), Ok("x_1".into()));
        assert_eq!(parse_metadata(b"return 1").expect_err("refused"), "ERR Missing library metadata");
        assert_eq!(parse_metadata(b"#!lua name=a").expect_err("refused"), "ERR Invalid library metadata");
        assert_eq!(parse_metadata(b"#!lua\nx").expect_err("refused"), "ERR Library name was not given");
        assert_eq!(parse_metadata(b"#!lua name=a foo=b\nx").expect_err("refused"), "ERR Invalid metadata value given: foo=b");
        assert_eq!(parse_metadata(b"#!js name=a\nx").expect_err("refused"), "ERR Engine 'js' not found");
        assert_eq!(parse_metadata(b"#!lua name=a name=b\nx").expect_err("refused"), "ERR Invalid metadata value, name argument was given multiple times");
        assert!(parse_metadata(b"#!lua name=bad-name\nx").expect_err("refused").contains("Library names can only contain"));
        // Any bytes: no panic (a part whose fifth byte is inside a character).
        assert_eq!(parse_metadata("#!lua \u{e9}\u{e9}\u{e9}=x\n".as_bytes()).expect_err("refused"), "ERR Invalid metadata value given: \u{e9}\u{e9}\u{e9}=x");
        assert!(parse_metadata(b"#!\xff\xfe name=x\n").is_err());
    }

    #[test]
    fn a_change_is_all_or_nothing() {
        let lib = |name: &str, fns: &[&str]| Library {
            name: name.into(),
            code: Arc::from(&b""[..]),
            functions: fns.iter().map(|f| FunctionInfo { name: (*f).into(), description: None, flags: 0 }).collect(),
        };
        let f = Functions::default();
        f.add(vec![lib("a", &["f1"])], OnConflict::Refuse).expect("added");
        assert_eq!(f.add(vec![lib("a", &["f2"])], OnConflict::Refuse).expect_err("refused"), "ERR Library 'a' already exists");
        assert_eq!(f.add(vec![lib("b", &["f1"])], OnConflict::Refuse).expect_err("refused"), "ERR Function f1 already exists");
        f.add(vec![lib("a", &["f2"])], OnConflict::Replace).expect("added");
        let s = f.snapshot();
        assert_eq!(s.function("f2").map(|(l, _)| l.name.as_str()), Some("a"));
        assert!(s.function("f1").is_none());
        assert!(f.delete("a") && !f.delete("a"));
        assert_eq!(f.snapshot().generation, 3);
    }
}
