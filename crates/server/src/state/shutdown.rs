//! A shutdown waiting for its replicas (Redis 7.0's `shutdown-timeout`): what was asked,
//! until when it waits, and the SHUTDOWN clients blocked meanwhile. What begins, moves
//! on and ends it is `crate::shutdown`.

use parking_lot::Mutex;

/// The shutdown under way, waiting for replicas to acknowledge the whole stream.
pub struct Pending {
    /// Unix ms at which it stops waiting (`shutdown-timeout`).
    pub deadline_ms: i64,
    /// Each SHUTDOWN client that waits, as (its loop, its id); none for a signal.
    pub clients: Vec<(usize, u64)>,
    /// SHUTDOWN SAVE (`Some(true)`), NOSAVE (`Some(false)`), or the save rules (`None`).
    pub save: Option<bool>,
    /// SHUTDOWN FORCE: a failed final save does not stop the exit.
    pub force: bool,
    /// The stream's offset before the `REPLCONF GETACK *` fed at the start, and after
    /// it (a replica answers it with the offset before it).
    pub getack: (u64, u64),
}

/// The waiting shutdown, if any.
#[derive(Default)]
pub struct ShutdownWait {
    pub(crate) pending: Mutex<Option<Pending>>,
}

impl ShutdownWait {
    /// Whether a shutdown waits for its replicas now.
    pub fn waiting(&self) -> bool {
        self.pending.lock().is_some()
    }
}
