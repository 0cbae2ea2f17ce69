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
}

impl Pause {
    /// The mode in force at `now_ms` (OFF once its time is over).
    pub(crate) fn mode_at(&self, now_ms: i64) -> u8 {
        let mode = self.mode.load(Ordering::Acquire);
        if mode == OFF || now_ms >= self.end_ms.load(Ordering::Acquire) {
            OFF
        } else {
            mode
        }
    }

    /// True while clients are paused in any mode (active expiry stops).
    pub fn active(&self, now_ms: i64) -> bool {
        self.mode_at(now_ms) != OFF
    }
}
