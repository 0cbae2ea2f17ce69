//! The tool's own CPU use, per thread (getrusage RUSAGE_THREAD), so that a run can say when the
//! client, not the server, was the bottleneck.

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

fn tv(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// CPU and wall time of one load thread.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    /// CPU seconds (user + system).
    pub cpu_s: f64,
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
}

/// Measures one thread from creation to [`CpuMeter::finish`].
pub struct CpuMeter {
    cpu0: f64,
    t0: Instant,
}

impl CpuMeter {
    /// Starts measuring the calling thread.
    pub fn start() -> Self {
        CpuMeter { cpu0: thread_cpu_seconds(), t0: Instant::now() }
    }
    /// CPU and wall time since [`CpuMeter::start`] (call on the same thread).
    pub fn finish(&self) -> ThreadCpu {
        ThreadCpu {
            cpu_s: thread_cpu_seconds() - self.cpu0,
            wall_s: self.t0.elapsed().as_secs_f64(),
        }
    }
}

/// Threshold above which a load thread is reported as saturated.
pub const SATURATED: f64 = 0.90;

/// Warning lines for threads above [`SATURATED`] of a core (empty when none).
pub fn saturation_warnings(threads: &[ThreadCpu]) -> Vec<String> {
    threads
        .iter()
        .enumerate()
        .filter(|(_, t)| t.wall_s > 0.05 && t.share() > SATURATED)
        .map(|(i, t)| {
            format!(
                "WARNING: basalt-bench thread {i} used {:.0}% of a CPU core: the client may be the bottleneck, not the server (try --threads)",
                t.share() * 100.0
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_only_above_threshold() {
        let t = [ThreadCpu { cpu_s: 0.95, wall_s: 1.0 }, ThreadCpu { cpu_s: 0.5, wall_s: 1.0 }];
        let w = saturation_warnings(&t);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("thread 0 used 95%"));
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
