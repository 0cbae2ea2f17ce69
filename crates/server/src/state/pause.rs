//! CLIENT PAUSE's state: the pause in force and until when. What postpones and resumes
//! clients is `command/pause.rs`.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};

/// The pause modes.
pub(crate) const OFF: u8 = 0;
pub(crate) const WRITE: u8 = 1;
pub(crate) const ALL: u8 = 2;

/// The pause in force, if any. A pause whose time is over stays recorded (its mode is
/// not reset by the readers, which could race with a new CLIENT PAUSE): `mode_at`
/// reads it as OFF.
#[derive(Default)]
pub struct Pause {
    /// OFF, WRITE or ALL.
    pub(crate) mode: AtomicU8,
    /// Unix time in ms at which it ends.
    pub(crate) end_ms: AtomicI64,
    /// Serializes CLIENT PAUSE, UNPAUSE and the end of a pause by its time (read,
    /// combine, store, and the keyspace's expiry hold).
    pub(crate) update: parking_lot::Mutex<()>,
    /// The keyspace holds expired keys (`Keyspace::hold_expiry`) for this pause.
    pub(crate) expiry_held: AtomicBool,
    /// Who else holds writes, beside any CLIENT PAUSE, which CLIENT UNPAUSE does not
    /// lift (as in Redis, pauses of their own purpose there): [`FAILOVER`] until it ends
    /// (`replication::failover`), [`SHUTDOWN`] while a shutdown waits for its replicas
    /// (`crate::shutdown`). One word, so that the request path reads it with the mode.
    pub(crate) holds: AtomicU8,
}

/// A FAILOVER's hold of writes (a bit of [`Pause::holds`]).
pub(crate) const FAILOVER: u8 = 1;
/// A waiting shutdown's hold of writes (a bit of [`Pause::holds`]).
pub(crate) const SHUTDOWN: u8 = 2;

impl Pause {
    /// The mode in force at `now_ms` (OFF once its time is over).
    pub(crate) fn mode_at(&self, now_ms: i64) -> u8 {
        let mode = self.mode.load(Ordering::Acquire);
        let client = if mode == OFF || now_ms >= self.end_ms.load(Ordering::Acquire) { OFF } else { mode };
        if self.writes_held() {
            client.max(WRITE)
        } else {
            client
        }
    }

    /// True when no pause was set since the last UNPAUSE and nothing holds writes (the
    /// request path's test).
    #[inline]
    pub(crate) fn never_set(&self) -> bool {
        self.mode.load(Ordering::Relaxed) == OFF && self.holds.load(Ordering::Relaxed) == 0
    }

    /// A FAILOVER or a shutdown holds writes (beside any CLIENT PAUSE, which CLIENT
    /// UNPAUSE lifts while they stay).
    #[inline]
    pub(crate) fn writes_held(&self) -> bool {
        self.holds.load(Ordering::Acquire) != 0
    }

    /// A FAILOVER begins (`on`) or ends: writes wait meanwhile, and expired keys stay
    /// (no DEL may enter the stream while the replica catches up). Clients that waited
    /// run again at their loop's next tick (`command::pause::resume_if_over`).
    pub fn hold_for_failover(&self, keyspace: &store::Keyspace, on: bool) {
        self.hold(FAILOVER, keyspace, on);
    }

    /// A shutdown begins to wait for its replicas (`on`) or stops waiting: as
    /// [`hold_for_failover`](Self::hold_for_failover), Redis's pause of writes then.
    pub fn hold_for_shutdown(&self, keyspace: &store::Keyspace, on: bool) {
        self.hold(SHUTDOWN, keyspace, on);
    }

    fn hold(&self, which: u8, keyspace: &store::Keyspace, on: bool) {
        let _update = self.update.lock();
        if on {
            self.holds.fetch_or(which, Ordering::AcqRel);
        } else {
            self.holds.fetch_and(!which, Ordering::AcqRel);
        }
        if on && !self.expiry_held.swap(true, Ordering::AcqRel) {
            keyspace.hold_expiry(true);
        }
    }

    /// True while clients are paused in any mode (active expiry stops).
    pub fn active(&self, now_ms: i64) -> bool {
        self.mode_at(now_ms) != OFF
    }
}
