//! The event loops' published load (busy fraction, clients, moves) and the recall
//! queues, read by the balancer of every loop (`net/balance.rs`) and by INFO.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

/// What one loop publishes about itself.
#[derive(Default)]
pub(crate) struct LoopState {
    /// Busy fraction of one CPU, in thousandths (smoothed over two ticks).
    pub(crate) busy: AtomicU32,
    pub(crate) clients: AtomicUsize,
    pub(crate) moved_in: AtomicU64,
    pub(crate) moved_out: AtomicU64,
    /// Connections (client ids) this loop is asked to send back to another loop after
    /// a spread that did not pay off.
    pub(crate) recalls: Mutex<Vec<(u64, usize)>>,
}

/// The loops' published load, shared by all loops.
pub struct Loops {
    pub(crate) states: Vec<LoopState>,
    /// `loop-spread-busy`, in percent (0: balancing off).
    pub(crate) spread_busy: AtomicU32,
    /// The machine's idle CPU in the last window any loop measured, in thousandths of
    /// one CPU (INFO).
    pub(crate) idle_cpu: AtomicU32,
}

impl Loops {
    pub fn new(threads: usize, spread_busy_percent: u32) -> Loops {
        Loops {
            states: (0..threads.max(1)).map(|_| LoopState::default()).collect(),
            spread_busy: AtomicU32::new(spread_busy_percent),
            idle_cpu: AtomicU32::new(0),
        }
    }

    pub fn set_spread_busy(&self, percent: u32) {
        self.spread_busy.store(percent, Ordering::Relaxed);
    }

    pub(crate) fn spread_permille(&self) -> u32 {
        self.spread_busy.load(Ordering::Relaxed).saturating_mul(10)
    }

    pub(crate) fn busy(&self) -> Vec<u32> {
        self.states
            .iter()
            .map(|s| s.busy.load(Ordering::Relaxed))
            .collect()
    }

    /// The loop a connection accepted by loop `me` should live on: one of the loops
    /// already serving clients (only a spread that paid off adds a loop to those), the
    /// first not busier than the threshold, else the least busy; loop 0 when none is.
    pub fn place(&self, me: usize) -> usize {
        let spread = self.spread_permille();
        if spread == 0 || self.states.len() < 2 {
            return me;
        }
        let serving = self
            .states
            .iter()
            .enumerate()
            .filter(|(_, s)| s.clients.load(Ordering::Relaxed) > 0);
        let busy = |s: &LoopState| s.busy.load(Ordering::Relaxed);
        let mut least: Option<(usize, u32)> = None;
        for (i, s) in serving {
            let b = busy(s);
            if b < spread {
                return i;
            }
            if least.is_none_or(|(_, l)| b < l) {
                least = Some((i, b));
            }
        }
        least.map_or(0, |(i, _)| i)
    }

    /// Counts a connection's move from loop `from` to loop `to` (INFO).
    pub fn count_move(&self, from: usize, to: usize) {
        if let Some(s) = self.states.get(from) {
            s.moved_out.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(s) = self.states.get(to) {
            s.moved_in.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Asks loop `holder` to send connections `ids` back to loop `to`.
    pub(crate) fn recall(&self, holder: usize, ids: &[u64], to: usize) {
        if let Some(s) = self.states.get(holder) {
            s.recalls.lock().extend(ids.iter().map(|&id| (id, to)));
        }
    }

    /// The connections loop `me` is asked to send back: (client id, loop).
    pub fn take_recalls(&self, me: usize) -> Vec<(u64, usize)> {
        match self.states.get(me) {
            Some(s) => std::mem::take(&mut *s.recalls.lock()),
            None => Vec::new(),
        }
    }

    /// INFO server lines, one per loop: `basalt_loop<i>:clients=..,busy_percent=..,...`.
    pub fn render_info(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(
            out,
            "basalt_loop_spread_busy:{}\r\nbasalt_idle_cpu_percent:{}\r\n",
            self.spread_busy.load(Ordering::Relaxed),
            self.idle_cpu.load(Ordering::Relaxed) / 10
        );
        for (i, s) in self.states.iter().enumerate() {
            let _ = write!(
                out,
                "basalt_loop{i}:clients={},busy_percent={},moved_in={},moved_out={}\r\n",
                s.clients.load(Ordering::Relaxed),
                s.busy.load(Ordering::Relaxed) / 10,
                s.moved_in.load(Ordering::Relaxed),
                s.moved_out.load(Ordering::Relaxed),
            );
        }
    }
}
