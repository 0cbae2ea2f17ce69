//! The tool's own CPU use, per thread (getrusage RUSAGE_THREAD), and the time it waited
//! for a CPU (the scheduler's run-queue wait, /proc/thread-self/schedstat), so that a
//! run can say when the client, not the server, was the bottleneck. Both count: a load
//! thread that shares its CPUs with the server may use half a core and still be busy all
//! the time, waiting its turn (issue 25: 455 ms running and 475 ms waiting per second
//! went unwarned when only CPU use counted).

use std::time::Instant;

/// CPU time of the calling thread (user + system), in seconds.
pub fn thread_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we own; RUSAGE_THREAD is valid on Linux.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return 0.0;
    }
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Seconds the calling thread has waited on a run queue for a CPU (0 where the kernel
/// does not say: no schedstat).
pub fn thread_wait_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|w| w.parse::<u64>().ok()))
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

fn tv(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// CPU and wall time of one load thread.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    /// CPU seconds (user + system).
    pub cpu_s: f64,
    /// Seconds spent runnable but waiting for a CPU.
    pub wait_s: f64,
    /// Wall seconds.
    pub wall_s: f64,
}

impl ThreadCpu {
    /// Share of one core used (0..1+).
    pub fn share(&self) -> f64 {
        if self.wall_s <= 0.0 {
            0.0
        } else {
            self.cpu_s / self.wall_s
        }
    }

    /// Share of the time the thread was busy: running, or ready to run and waiting.
    pub fn busy(&self) -> f64 {
        if self.wall_s <= 0.0 {
            0.0
        } else {
            (self.cpu_s + self.wait_s) / self.wall_s
        }
    }
}

/// Measures one thread from creation to [`CpuMeter::finish`].
pub struct CpuMeter {
    cpu0: f64,
    wait0: f64,
    t0: Instant,
}

impl CpuMeter {
    /// Starts measuring the calling thread.
    pub fn start() -> Self {
        CpuMeter { cpu0: thread_cpu_seconds(), wait0: thread_wait_seconds(), t0: Instant::now() }
    }
    /// CPU and wall time since [`CpuMeter::start`] (call on the same thread).
    pub fn finish(&self) -> ThreadCpu {
        ThreadCpu {
            cpu_s: thread_cpu_seconds() - self.cpu0,
            wait_s: (thread_wait_seconds() - self.wait0).max(0.0),
            wall_s: self.t0.elapsed().as_secs_f64(),
        }
    }
}

/// Threshold above which a load thread is reported as saturated.
pub const SATURATED: f64 = 0.90;

/// Warning lines for threads busy more than [`SATURATED`] of the time, running or
/// waiting for a CPU (empty when none).
pub fn saturation_warnings(threads: &[ThreadCpu]) -> Vec<String> {
    threads
        .iter()
        .enumerate()
        .filter(|(_, t)| t.wall_s > 0.05 && t.busy() > SATURATED)
        .map(|(i, t)| {
            if t.wait_s / t.wall_s >= 0.10 {
                format!(
                    "WARNING: basalt-bench thread {i} was busy {:.0}% of the time ({:.0}% on a CPU, {:.0}% waiting for one): the client may be the bottleneck, not the server; it shares CPUs with other work (the server?): pin them apart, or add --threads where CPUs are free",
                    t.busy() * 100.0,
                    t.share() * 100.0,
                    t.wait_s / t.wall_s * 100.0
                )
            } else {
                format!(
                    "WARNING: basalt-bench thread {i} used {:.0}% of a CPU core: the client may be the bottleneck, not the server (try --threads)",
                    t.share() * 100.0
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_only_above_threshold() {
        let t = [
            ThreadCpu { cpu_s: 0.95, wait_s: 0.0, wall_s: 1.0 },
            ThreadCpu { cpu_s: 0.5, wait_s: 0.0, wall_s: 1.0 },
            // Issue 25: half a core used, as long again waiting for one: busy 93%.
            ThreadCpu { cpu_s: 0.455, wait_s: 0.475, wall_s: 1.0 },
        ];
        let w = saturation_warnings(&t);
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("thread 0 used 95%"));
        assert!(w[1].contains("thread 2 was busy 93% of the time (46% on a CPU, 48% waiting for one)"), "{}", w[1]);
    }

    #[test]
    fn busy_loop_uses_cpu() {
        let m = CpuMeter::start();
        let mut x = 0u64;
        while m.t0.elapsed().as_millis() < 50 {
            x = x.wrapping_add(1);
        }
        assert!(x > 0);
        assert!(m.finish().share() > 0.3);
    }
}
