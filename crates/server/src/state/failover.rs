//! FAILOVER's state: whether one is under way, in which phase, and what it asked for
//! (plain data; `replication::failover` runs it, `replication::replica` ends it).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use parking_lot::{Mutex, MutexGuard};

/// No failover (INFO `master_failover_state:no-failover`).
pub const NONE: u8 = 0;
/// Writes held until the target has the whole stream.
pub const WAIT_FOR_SYNC: u8 = 1;
/// This server follows the target and asked it to take over.
pub const IN_PROGRESS: u8 = 2;

/// The failover under way, if any.
#[derive(Default)]
pub struct Failover {
    state: AtomicU8,
    plan: Mutex<Plan>,
    /// A replica acknowledged while waiting for the sync: the loop that read it moves
    /// the failover on after its batch (`replication::failover::after_acks`).
    acked: AtomicBool,
}

/// What FAILOVER asked for.
#[derive(Default, Clone)]
pub struct Plan {
    /// The replica to hand over to (`TO`), or the one found synced.
    pub target: Option<(String, u16)>,
    /// Unix ms at which waiting for the sync ends (0: no TIMEOUT).
    pub end_ms: i64,
    pub force: bool,
    /// The stream's offsets before and after the `REPLCONF GETACK *` fed when the
    /// failover began: a replica answers it with the offset before it (as Redis's
    /// does), so an acknowledgement of the first while the stream ends at the second
    /// means the whole stream.
    pub getack: Option<(u64, u64)>,
}

impl Failover {
    pub fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    pub fn set_state(&self, state: u8) {
        self.state.store(state, Ordering::Release);
    }

    /// INFO's `master_failover_state`.
    pub fn state_name(&self) -> &'static str {
        match self.state() {
            WAIT_FOR_SYNC => "waiting-for-sync",
            IN_PROGRESS => "failover-in-progress",
            _ => "no-failover",
        }
    }

    /// True while a failover holds writes (and keeps the stream still).
    #[inline]
    pub fn active(&self) -> bool {
        self.state() != NONE
    }

    /// A replica's REPLCONF ACK arrived (noted only while waiting for the sync).
    pub fn note_ack(&self) {
        if self.state() == WAIT_FOR_SYNC {
            self.acked.store(true, Ordering::Release);
        }
    }

    /// Whether an acknowledgement arrived since the last call (one load when none).
    #[inline]
    pub fn take_ack(&self) -> bool {
        self.acked.load(Ordering::Relaxed) && self.acked.swap(false, Ordering::AcqRel)
    }

    /// The plan, locked (changes of phase happen under it).
    pub fn plan(&self) -> MutexGuard<'_, Plan> {
        self.plan.lock()
    }

    /// The target of the failover in progress (the master this server's link then asks
    /// to take over).
    pub fn in_progress_target(&self) -> Option<(String, u16)> {
        (self.state() == IN_PROGRESS).then(|| self.plan.lock().target.clone()).flatten()
    }

    /// Back to no failover, under the plan's lock (`plan`): the plan forgotten. The
    /// caller lets the held writes go (`Pause::hold_for_failover`).
    pub fn clear(&self, plan: &mut Plan) {
        *plan = Plan::default();
        self.set_state(NONE);
    }

    /// Logs why the failover ends without handing over.
    pub fn log_abort(plan: &Plan, reason: &str) {
        match &plan.target {
            Some((host, port)) => crate::log::notice(&format!("FAILOVER to {host}:{port} aborted: {reason}")),
            None => crate::log::notice(&format!("FAILOVER to any replica aborted: {reason}")),
        }
    }
}
