//! The command table: every command and subcommand flattened with an index (the
//! per-command statistics are kept by it), and the lookups by name, `rename-command`
//! included. Built once from the families' spec tables by `registry.rs`, the one file
//! that lists them; handlers reach it through `Ctx::table`.

use std::sync::OnceLock;

use hashbrown::HashMap;

use super::{flags, CommandSpec};

/// One row of the flattened command table.
pub struct TableEntry {
    pub spec: &'static CommandSpec,
    /// "get", or "client|kill" for a subcommand.
    pub fullname: String,
    pub parent: Option<usize>,
    /// A plain data command (its group is a data type's or generic keys'): it may keep
    /// a shard lock across a batch (`coalescable`), and as a read it waits for the log
    /// offsets of its keys (`read_need`). Computed once from the group name.
    pub data: bool,
    /// Takes every event loop's gate itself (`flags::ALL_GATES`).
    pub all_gates: bool,
}

/// Whether a command group holds plain data commands (see `TableEntry::data`).
fn is_data_group(group: &str) -> bool {
    matches!(group, "string" | "list" | "set" | "sorted-set" | "hash" | "generic" | "bitmap")
}

/// Longest command name looked up by its packed form (`CommandTable::short`).
const SHORT_NAME: usize = 16;

/// `name` lower-cased and zero-padded into one integer, when it fits. Read with a few
/// word loads and lower-cased eight bytes at a time: a byte loop into a `u128` (or
/// bytes stored into an array and read back whole) cost ~150 instructions a lookup.
pub(super) fn short_key(name: &[u8]) -> Option<u128> {
    if name.len() > SHORT_NAME {
        return None;
    }
    // Most names fit in the low word: the high one is then zero, with nothing to load.
    let (lo, hi) = if name.len() > 8 {
        (load_le(&name[..8]), ascii_lower8(load_le(&name[8..])))
    } else {
        (load_le(name), 0)
    };
    Some(u128::from(hi) << 64 | u128::from(ascii_lower8(lo)))
}

/// Up to 8 bytes as a little-endian integer, zero-padded.
fn load_le(bytes: &[u8]) -> u64 {
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    match bytes.len() {
        8 => u64::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7]]),
        // Two overlapping 4-byte words: the shared bytes are the same in both.
        n @ 4..=7 => u64::from(word(bytes)) | u64::from(word(&bytes[n - 4..])) << (8 * (n - 4)),
        3 => u64::from(bytes[0]) | u64::from(bytes[1]) << 8 | u64::from(bytes[2]) << 16,
        2 => u64::from(bytes[0]) | u64::from(bytes[1]) << 8,
        1 => u64::from(bytes[0]),
        _ => 0,
    }
}

/// ASCII `A`-`Z` to `a`-`z` in each byte of `x`, other bytes unchanged.
fn ascii_lower8(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Per byte, on its low 7 bits (sums stay inside the byte): the high bit is set when
    // the byte is at least 'A', and when it is above 'Z'.
    let low7 = x & (0x7f * ONES);
    let at_least_a = low7 + (0x80 - u64::from(b'A')) * ONES;
    let above_z = low7 + (0x80 - u64::from(b'Z') - 1) * ONES;
    let upper = at_least_a & !above_z & !x & (0x80 * ONES);
    x | upper >> 2
}

/// Top-level command names by their packed form (`short_key`), in an open-addressed
/// table probed linearly from a multiplicative hash: one multiply, usually one probe.
/// hashbrown's general map (ahash of the `u128`, group probing) was 3% of the server's
/// CPU under pipelined LPUSH; with this table a lookup costs ~90 instructions instead of
/// ~130 (callgrind), name packing included.
pub(super) struct ShortNames {
    /// Indexes into `names`, `EMPTY` where free; a power of two, at most a quarter
    /// full so that probe runs stay short.
    pub(super) slots: Box<[u16]>,
    /// Each command's packed name and its index in the command table.
    pub(super) names: Vec<(u128, usize)>,
}

impl ShortNames {
    const EMPTY: u16 = u16::MAX;

    fn new(names: &[(u128, usize)]) -> ShortNames {
        let size = (names.len() * 4).next_power_of_two().max(64);
        assert!(names.len() < usize::from(Self::EMPTY), "command table too large for u16 slots");
        let mut t = ShortNames { slots: vec![Self::EMPTY; size].into_boxed_slice(), names: names.to_vec() };
        for (i, &(key, _)) in names.iter().enumerate() {
            let mut h = t.home(key);
            while t.slots[h] != Self::EMPTY {
                h = (h + 1) & (size - 1);
            }
            t.slots[h] = i as u16;
        }
        t
    }

    pub(super) fn home(&self, key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        let bits = self.slots.len().trailing_zeros();
        (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
    }

    #[inline]
    fn get(&self, key: u128) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut h = self.home(key);
        loop {
            let s = self.slots[h];
            if s == Self::EMPTY {
                return None;
            }
            let (name, idx) = self.names[usize::from(s)];
            if name == key {
                return Some(idx);
            }
            h = (h + 1) & mask;
        }
    }
}

/// The flattened table: every command and subcommand with an index (used for stats).
pub struct CommandTable {
    pub entries: Vec<TableEntry>,
    top: HashMap<Vec<u8>, usize>,
    /// Top-level names of up to 16 bytes by their packed form (`short_key`): the lookup
    /// of every command, one integer hash instead of a lower-cased copy and a byte hash.
    pub(super) short: ShortNames,
    subs: HashMap<(usize, Vec<u8>), usize>,
    /// `rename-command`, once applied at start.
    renames: OnceLock<Renames>,
}

impl CommandTable {
    /// The table of the commands in `families`, in their order.
    pub fn build(families: &[&'static [CommandSpec]]) -> CommandTable {
        let mut t = CommandTable {
            entries: Vec::new(),
            top: HashMap::new(),
            short: ShortNames::new(&[]),
            subs: HashMap::new(),
            renames: OnceLock::new(),
        };
        let mut short = Vec::new();
        for family in families {
            for spec in family.iter() {
                let idx = t.entries.len();
                t.entries.push(TableEntry {
                    spec,
                    fullname: spec.name.to_string(),
                    parent: None,
                    data: is_data_group(spec.group),
                    all_gates: spec.flags & flags::ALL_GATES != 0,
                });
                t.top.insert(spec.name.as_bytes().to_vec(), idx);
                if let Some(key) = short_key(spec.name.as_bytes()) {
                    short.push((key, idx));
                }
                for sub in spec.subcommands {
                    let sidx = t.entries.len();
                    t.entries.push(TableEntry {
                        spec: sub,
                        fullname: format!("{}|{}", spec.name, sub.name),
                        parent: Some(idx),
                        data: is_data_group(sub.group),
                        all_gates: false,
                    });
                    t.subs.insert((idx, sub.name.as_bytes().to_vec()), sidx);
                }
            }
        }
        t.short = ShortNames::new(&short);
        t
    }

    /// Finds a top-level command by name, case-insensitively, without allocating.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        if let Some(key) = short_key(name) {
            let idx = self.short.get(key)?;
            // Zero padding makes "get" and "get\0" one key: the length tells them apart.
            return (self.entries[idx].spec.name.len() == name.len()).then_some(idx);
        }
        self.lookup_long(name)
    }

    /// Names longer than `SHORT_NAME` (none of the common commands): out of line, so
    /// that its stack buffer does not weigh on every lookup.
    #[cold]
    #[inline(never)]
    fn lookup_long(&self, name: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 64];
        let lower = lowercase_into(name, &mut buf)?;
        self.top.get(lower).copied()
    }

    /// Finds a subcommand of `parent`.
    pub fn lookup_sub(&self, parent: usize, name: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 64];
        let lower = lowercase_into(name, &mut buf)?;
        self.subs.get(&(parent, lower.to_vec())).copied()
    }

    /// Top-level entries only, in table order.
    pub fn top_level(&self) -> impl Iterator<Item = (usize, &TableEntry)> {
        self.entries.iter().enumerate().filter(|(_, e)| e.parent.is_none())
    }

    /// Subcommand entries of a parent.
    pub fn children(&self, parent: usize) -> impl Iterator<Item = (usize, &TableEntry)> {
        self.entries.iter().enumerate().filter(move |(_, e)| e.parent == Some(parent))
    }
}

fn lowercase_into<'b>(name: &[u8], buf: &'b mut [u8; 64]) -> Option<&'b [u8]> {
    if name.len() > buf.len() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    Some(&buf[..name.len()])
}

/// `rename-command` (redis.conf): commands clients reach by another name, or not at all.
struct Renames {
    /// New name (lower case) -> the command.
    to: hashbrown::HashMap<Vec<u8>, usize>,
    /// Commands no longer reachable by their own name.
    hidden: Vec<usize>,
}

/// Applies the config's `rename-command` pairs (original, new; an empty new name
/// disables the command), once, at start, with Redis's errors for an unknown command and
/// a name taken: Err((index of the pair, reason)). The log's replay still knows every
/// command by its own name too (`lookup_any`), as Redis's lookupCommandOrOriginal.
pub fn install_renames(t: &CommandTable, pairs: &[(String, String)]) -> Result<(), (usize, String)> {
    if pairs.is_empty() {
        return Ok(());
    }
    let mut r = Renames { to: hashbrown::HashMap::new(), hidden: Vec::new() };
    for (n, (from, to)) in pairs.iter().enumerate() {
        let Some(idx) = lookup_client_in(t, &r, from.as_bytes()) else {
            return Err((n, "No such command in rename-command".into()));
        };
        let to = to.to_ascii_lowercase();
        if !to.is_empty() && lookup_client_in(t, &r, to.as_bytes()).is_some() {
            return Err((n, "Target command name already exists".into()));
        }
        r.to.retain(|_, i| *i != idx);
        r.hidden.push(idx);
        if !to.is_empty() {
            r.to.insert(to.into_bytes(), idx);
        }
    }
    t.renames.set(r).map_err(|_| (0, "rename-command applied twice".to_string()))
}

fn lookup_client_in(t: &CommandTable, r: &Renames, name: &[u8]) -> Option<usize> {
    if !r.to.is_empty() {
        if let Some(&idx) = r.to.get(&name.to_ascii_lowercase()) {
            return Some(idx);
        }
    }
    t.lookup(name).filter(|idx| !r.hidden.contains(idx))
}

impl CommandTable {
    /// A command as clients name it (after `rename-command`).
    #[inline]
    pub fn lookup_client(&self, name: &[u8]) -> Option<usize> {
        match self.renames.get() {
            None => self.lookup(name),
            Some(r) => lookup_client_in(self, r, name),
        }
    }

    /// A command by the name a client gave it or by its own (the log's replay: records
    /// written as sent use the new names, those a command states, SET ... PXAT say, the
    /// own).
    pub fn lookup_any(&self, name: &[u8]) -> Option<usize> {
        self.lookup_client(name).or_else(|| self.lookup(name))
    }
}
