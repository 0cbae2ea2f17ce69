//! The command families, listed once. The table of every command (`table.rs`) is built
//! from them on first use. This is the one file of the command folder that names every
//! family: the families, the table and the dispatcher do not import it (handlers reach
//! the table through `Ctx::table`), so the folder's files import each other in no long
//! circle.

use std::sync::OnceLock;

use super::table::CommandTable;
use super::{
    acl, bitfield, blocking, cluster, connection, debug, dump, functions, geo, hashes, hyperloglog, keys, latency, lists, migrate, module, monitor, pubsub, replication, scripting, server, sets,
    sort, sorted_sets, stream_groups, stream_info, streams, strings, transactions, CommandSpec,
};

/// The command table, built on first use.
pub fn table() -> &'static CommandTable {
    static TABLE: OnceLock<CommandTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let t = CommandTable::build(&families());
        // The ACL rules name commands by this table's indexes.
        crate::acl::install_catalog(acl::catalog_of(&t));
        t
    })
}

/// Every family's table.
fn families() -> [&'static [CommandSpec]; 29] {
    [
        acl::COMMANDS,
        connection::COMMANDS,
        strings::COMMANDS,
        bitfield::COMMANDS,
        hyperloglog::COMMANDS,
        keys::COMMANDS,
        dump::COMMANDS,
        migrate::COMMANDS,
        hashes::COMMANDS,
        lists::COMMANDS,
        blocking::COMMANDS,
        sets::COMMANDS,
        sorted_sets::COMMANDS,
        geo::COMMANDS,
        streams::COMMANDS,
        stream_groups::COMMANDS,
        stream_info::COMMANDS,
        sort::COMMANDS,
        transactions::COMMANDS,
        pubsub::COMMANDS,
        server::COMMANDS,
        latency::COMMANDS,
        monitor::COMMANDS,
        debug::COMMANDS,
        replication::COMMANDS,
        scripting::COMMANDS,
        functions::COMMANDS,
        cluster::COMMANDS,
        module::COMMANDS,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::table::short_key;

    #[test]
    fn table_has_unique_names_and_lookups_ignore_case() {
        let t = table();
        let mut names: Vec<&str> = t.entries.iter().map(|e| e.fullname.as_str()).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate command names");
        let get = t.lookup(b"GeT").expect("get exists");
        assert_eq!(t.entries[get].fullname, "get");
        let client = t.lookup(b"client").expect("client exists");
        let kill = t.lookup_sub(client, b"KILL").expect("client kill");
        assert_eq!(t.entries[kill].fullname, "client|kill");
        assert!(t.lookup(&[b'x'; 100]).is_none());
        // Every top-level name, in any case, finds itself; padding and near-misses find nothing.
        for (idx, e) in t.top_level() {
            assert_eq!(t.lookup(e.spec.name.to_ascii_uppercase().as_bytes()), Some(idx), "{}", e.spec.name);
            let mut padded = e.spec.name.as_bytes().to_vec();
            padded.push(0);
            assert_eq!(t.lookup(&padded), None, "{} with a NUL", e.spec.name);
        }
        assert!(t.lookup(b"ZREMRANGEBYSCORE").is_some());
        assert_eq!(t.lookup(b"get\0\0"), None);
        assert_eq!(t.lookup(b"ge"), None);
        assert_eq!(t.lookup(b""), None);
        assert_eq!(t.lookup(b"g\xc5t"), None);
    }

    #[test]
    fn short_keys_lower_case_ascii_only_and_keep_every_byte() {
        let slow = |name: &[u8]| {
            let mut key = 0u128;
            for (i, b) in name.iter().enumerate() {
                key |= u128::from(b.to_ascii_lowercase()) << (8 * i);
            }
            key
        };
        let mut names: Vec<Vec<u8>> = vec![b"".to_vec(), b"@[`{".to_vec(), b"AZaz".to_vec()];
        for len in 1..=16 {
            names.push((0..len).map(|i| b"GeTzREMRANGEBYSCORE"[i % 19]).collect());
            names.push((0..len).map(|i| (i as u8).wrapping_mul(37).wrapping_add(0x3f)).collect());
            names.push((0..len).map(|i| 0xc1 + i as u8).collect());
        }
        for b in 0..=255u8 {
            names.push(vec![b; 3]);
            names.push(vec![b; 11]);
        }
        for name in &names {
            assert_eq!(short_key(name), Some(slow(name)), "{name:?}");
        }
        assert_eq!(short_key(&[b'a'; 17]), None);
    }

    #[test]
    fn short_names_are_found_within_a_few_probes() {
        // The hash spreads real command names: a bad multiplier or fold would leave long
        // runs that every lookup of those commands walks.
        let s = &table().short;
        let probes: Vec<usize> = (0..s.names.len())
            .map(|i| {
                let mut h = s.home(s.names[i].0);
                let mut n = 1;
                while usize::from(s.slots[h]) != i {
                    h = (h + 1) & (s.slots.len() - 1);
                    n += 1;
                }
                n
            })
            .collect();
        let mean = probes.iter().sum::<usize>() as f64 / probes.len() as f64;
        assert!(probes.len() > 150, "{} names", probes.len());
        assert!(mean < 1.5 && probes.iter().all(|&n| n <= 8), "mean {mean}, max {:?}", probes.iter().max());
    }
}
