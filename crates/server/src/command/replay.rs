//! The dispatcher's entry point for callers above it that run commands with no
//! connection: the log's replay at start and under DEBUG LOADAOF, later a replica's
//! link to its master. Commands run as a loading client: every command is known
//! (renamed ones under both names), writes are not propagated again (a master's reach
//! this server's log), and a blocking command whose data is not there is dropped
//! instead of waiting.

use std::sync::Arc;

use crate::apply::Apply;
use crate::shared::{ClientInfo, Shared};

use super::table::CommandTable;
use super::{Client, Ctx};

/// Runs replayed commands through the dispatcher as one loading client.
pub struct Replayer<'a> {
    shared: &'a Shared,
    /// The command table (the registry's, given by the caller: the registry lists DEBUG,
    /// whose LOADAOF makes a replayer).
    table: &'static CommandTable,
    client: Client,
    rng: fastrand::Rng,
    /// Replies, dropped after each command.
    scratch: Vec<u8>,
    /// Log an error reply (a replica's link: a command its master ran that fails here
    /// means the two diverge, and must be seen).
    report_errors: bool,
}

impl<'a> Replayer<'a> {
    /// A replayer of `table`'s commands whose client is named `name` (CLIENT LIST never
    /// shows it).
    pub fn new(shared: &'a Shared, table: &'static CommandTable, name: &str) -> Replayer<'a> {
        let info = Arc::new(ClientInfo::new(0, name.into(), String::new(), -1, 0, 0));
        let mut client = Client::new(info, true);
        client.loading = true;
        Replayer { shared, table, client, rng: fastrand::Rng::with_seed(0), scratch: Vec::new(), report_errors: false }
    }

    /// The replayer of a replica's link to its master: as [`new`](Self::new), but its
    /// writes reach this server's log (`Client::from_master`), and every error reply is
    /// logged as Redis's replica logs it.
    pub fn for_master(shared: &'a Shared, table: &'static CommandTable) -> Replayer<'a> {
        let mut replayer = Replayer { report_errors: true, ..Replayer::new(shared, table, "master") };
        replayer.client.from_master = true;
        replayer
    }
}

impl Apply for Replayer<'_> {
    fn knows(&self, name: &[u8]) -> bool {
        self.table.lookup_any(name).is_some()
    }

    fn apply(&mut self, args: &[&[u8]], now_ms: i64) {
        let stats = self.shared.thread_stats[0].clone();
        let mut ctx = Ctx {
            shared: self.shared,
            table: self.table,
            client: &mut self.client,
            out: &mut self.scratch,
            now_ms,
            stats: &stats,
            rng: &mut self.rng,
            request: None,
        };
        super::dispatch::execute(&mut ctx, args);
        if self.report_errors && self.scratch.first() == Some(&b'-') {
            let end = self.scratch.iter().position(|&b| b == b'\r').unwrap_or(self.scratch.len()).min(256);
            crate::log::warning(&format!(
                "== CRITICAL == This replica is sending an error to its master: '{}' after processing the command '{}'",
                String::from_utf8_lossy(&self.scratch[1..end]),
                String::from_utf8_lossy(&args[0][..args[0].len().min(64)])
            ));
        }
        self.scratch.clear();
        if self.client.blocked {
            // A blocking command whose data is not there: nothing to wait for in a
            // replay (Basalt logs only pops that happened).
            super::blocking::forget(self.shared, self.client.info.id);
            self.client.blocked = false;
        }
    }

    fn drop_transaction(&mut self) {
        self.client.multi = None;
    }
}
