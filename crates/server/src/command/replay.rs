//! The dispatcher's entry point for callers above it that run commands with no
//! connection: the log's replay at start and under DEBUG LOADAOF, later a replica's
//! link to its master. Commands run as a loading client: every command is known
//! (renamed ones under both names), writes are not propagated again, and a blocking
//! command whose data is not there is dropped instead of waiting.

use std::sync::Arc;

use crate::apply::Apply;
use crate::shared::{ClientInfo, Shared};

use super::{Client, Ctx};

/// Runs replayed commands through the dispatcher as one loading client.
pub struct Replayer<'a> {
    shared: &'a Shared,
    client: Client,
    rng: fastrand::Rng,
    /// Replies, dropped after each command.
    scratch: Vec<u8>,
}

impl<'a> Replayer<'a> {
    /// A replayer whose client is named `name` (CLIENT LIST never shows it).
    pub fn new(shared: &'a Shared, name: &str) -> Replayer<'a> {
        let info = Arc::new(ClientInfo::new(0, name.into(), String::new(), -1, 0, 0));
        let mut client = Client::new(info, true);
        client.loading = true;
        Replayer { shared, client, rng: fastrand::Rng::with_seed(0), scratch: Vec::new() }
    }
}

impl Apply for Replayer<'_> {
    fn knows(&self, name: &[u8]) -> bool {
        super::registry::table().lookup_any(name).is_some()
    }

    fn apply(&mut self, args: &[&[u8]], now_ms: i64) {
        let stats = self.shared.thread_stats[0].clone();
        let mut ctx = Ctx {
            shared: self.shared,
            table: super::registry::table(),
            client: &mut self.client,
            out: &mut self.scratch,
            now_ms,
            stats: &stats,
            rng: &mut self.rng,
        };
        super::dispatch::execute(&mut ctx, args);
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
