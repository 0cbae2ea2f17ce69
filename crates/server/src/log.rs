//! The server log in Redis's line format (`pid:M dd Mon yyyy hh:mm:ss.mmm * message`),
//! to standard output or the `logfile`, filtered by `loglevel`.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

use parking_lot::Mutex;

use crate::config::LogLevel;

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Notice as u8);
static FILE: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Sets the level and destination (empty path = standard output).
pub fn init(level: LogLevel, logfile: &str) -> std::io::Result<()> {
    LEVEL.store(level as u8, Ordering::Relaxed);
    if !logfile.is_empty() {
        let f = std::fs::OpenOptions::new().create(true).append(true).open(logfile)?;
        *FILE.lock() = Some(f);
    }
    Ok(())
}

pub fn set_level(level: LogLevel) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

fn civil(days: i64) -> (i64, u32, u32) {
    // Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn write(level: LogLevel, msg: &str) {
    if (level as u8) < LEVEL.load(Ordering::Relaxed) {
        return;
    }
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let ms = store::Clock::System.now_ms();
    let (y, mo, d) = civil(ms.div_euclid(86_400_000));
    let in_day = ms.rem_euclid(86_400_000);
    let mark = match level {
        LogLevel::Debug => '.',
        LogLevel::Verbose => '-',
        LogLevel::Notice => '*',
        LogLevel::Warning => '#',
    };
    let line = format!(
        "{}:M {:02} {} {} {:02}:{:02}:{:02}.{:03} {} {}\n",
        std::process::id(),
        d,
        MONTHS[(mo - 1) as usize],
        y,
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
        mark,
        msg
    );
    let mut file = FILE.lock();
    match file.as_mut() {
        Some(f) => {
            let _ = f.write_all(line.as_bytes());
        }
        None => {
            let _ = std::io::stdout().lock().write_all(line.as_bytes());
        }
    }
}

pub fn warning(msg: &str) {
    write(LogLevel::Warning, msg);
}
pub fn notice(msg: &str) {
    write(LogLevel::Notice, msg);
}
pub fn verbose(msg: &str) {
    write(LogLevel::Verbose, msg);
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil(0), (1970, 1, 1));
        assert_eq!(super::civil(20_413), (2025, 11, 21));
        assert_eq!(super::civil(-1), (1969, 12, 31));
    }
}
