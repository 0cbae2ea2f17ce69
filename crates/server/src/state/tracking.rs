//! Client-side caching's table (CLIENT TRACKING): which clients track, their options, and
//! the keys and prefixes they follow. What registers reads and sends invalidations is
//! `tracking.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hashbrown::HashMap;
use parking_lot::Mutex;

use super::clients::ClientInfo;

/// A client's CLIENT TRACKING options (kept by its connection while tracking is on).
#[derive(Clone, Debug, Default)]
pub struct Mode {
    /// REDIRECT's client id, 0 without.
    pub redirect: u64,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    pub prefixes: Vec<Vec<u8>>,
}

/// A tracking client as the table knows it.
pub(crate) struct Target {
    pub(crate) info: Arc<ClientInfo>,
    pub(crate) mode: Mode,
    /// Its redirect client went away (CLIENT LIST `R`).
    pub(crate) broken: bool,
}

#[derive(Default)]
pub(crate) struct Table {
    /// Default mode: key name -> ids of the clients that read it.
    pub(crate) keys: HashMap<Vec<u8>, Vec<u64>>,
    /// Entries of `keys`, summed (INFO `tracking_total_items`).
    pub(crate) items: usize,
    /// BCAST: prefix -> ids of the clients that registered it.
    pub(crate) prefixes: Vec<(Vec<u8>, Vec<u64>)>,
    /// Every client with tracking on.
    pub(crate) targets: HashMap<u64, Target>,
}

/// The server's tracking state.
#[derive(Default)]
pub struct Tracking {
    /// Clients with tracking on: 0 makes every hook one load.
    pub(crate) clients: AtomicUsize,
    /// `tracking-table-max-keys` (0: no limit).
    pub max_keys: AtomicUsize,
    pub(crate) table: Mutex<Table>,
}

impl Tracking {
    /// Whether any client tracks.
    #[inline]
    pub fn active(&self) -> bool {
        self.clients.load(Ordering::Relaxed) != 0
    }

    /// INFO: (tracking_clients, tracking_total_keys, tracking_total_items,
    /// tracking_total_prefixes).
    pub fn stats(&self) -> (usize, usize, usize, usize) {
        let t = self.table.lock();
        (t.targets.len(), t.keys.len(), t.items, t.prefixes.len())
    }
}
