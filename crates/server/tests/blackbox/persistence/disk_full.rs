//! A full disk under the append-only log (issue 26, defect 3): the log's own writes
//! fail, space is freed, and writes must come back by themselves, with nothing
//! acknowledged lost. The data directory is a small file system mounted for the test,
//! so it needs root (CI runs as root); elsewhere it is skipped with a message. Under
//! `everysec` for both servers, and `always` for Basalt only (Redis 7.0.15 exits on a
//! failed write under `always`); Basalt holds the replies of writes the log has not
//! written under both.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::*;

/// A small file system mounted on a fresh directory for the test, unmounted when
/// dropped: ext4 on a loop device (a disk as users have, O_DIRECT included), else a
/// tmpfs.
struct SmallDisk {
    dir: tempfile::TempDir,
    _image: Option<tempfile::NamedTempFile>,
}

impl SmallDisk {
    fn mount(size_mb: u64) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let run = |cmd: &mut Command| cmd.output().is_ok_and(|o| o.status.success());
        if let Ok(image) = tempfile::NamedTempFile::new() {
            if image.as_file().set_len(size_mb << 20).is_ok()
                && run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(image.path()))
                && run(Command::new("mount").args(["-o", "loop"]).arg(image.path()).arg(dir.path()))
            {
                return Some(SmallDisk { dir, _image: Some(image) });
            }
        }
        if run(Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size_mb}m"), "tmpfs"]).arg(dir.path())) {
            return Some(SmallDisk { dir, _image: None });
        }
        eprintln!("skipped: cannot mount a small file system here (needs root)");
        None
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills the file system of `dir` with a file, leaving about `leave` bytes free.
fn fill(dir: &Path, leave: u64) -> PathBuf {
    let path = dir.join("filler");
    let free = free_bytes(dir);
    let want = free.saturating_sub(leave);
    let f = std::fs::File::create(&path).expect("filler");
    // Written, not set_len (a tmpfs hole takes no space).
    let chunk = vec![7u8; 1 << 20];
    let mut written = 0u64;
    let mut w = std::io::BufWriter::new(f);
    while written + chunk.len() as u64 <= want {
        if std::io::Write::write_all(&mut w, &chunk).is_err() {
            break;
        }
        written += chunk.len() as u64;
    }
    let _ = std::io::Write::flush(&mut w);
    path
}

fn free_bytes(dir: &Path) -> u64 {
    let out = Command::new("df").args(["-B1", "--output=avail"]).arg(dir).output().expect("df");
    String::from_utf8_lossy(&out.stdout).lines().nth(1).and_then(|l| l.trim().parse().ok()).unwrap_or(0)
}

fn field(info: &str, name: &str) -> Option<String> {
    info.lines().find_map(|l| l.strip_prefix(&format!("{name}:"))).map(|v| v.trim().to_string())
}

#[test]
fn writes_come_back_when_space_returns_after_a_full_disk() {
    if is_external() {
        eprintln!("skipped: spawns its own server");
        return;
    }
    let Some(bin) = server_binary() else { return };
    full_disk_then_space(bin, "everysec");
    // Redis exits on a failed write under `always`; Basalt holds the replies and goes on.
    if is_basalt() {
        full_disk_then_space(bin, "always");
    }
}

fn full_disk_then_space(bin: &Path, appendfsync: &str) {
    let Some(disk) = SmallDisk::mount(64) else { return };
    let flags = ["--appendonly", "yes", "--appendfsync", appendfsync];
    let mut server = ServerProcess::spawn_in(bin, disk.path(), &flags);
    // Let the log's preallocation run while there is room, then let other files take
    // the rest of the disk: 4 MB that will be freed, and all but 256 KB of the rest.
    std::thread::sleep(Duration::from_millis(1500));
    let spare = disk.path().join("spare");
    std::fs::write(&spare, vec![1u8; 4 << 20]).expect("spare");
    let filler = fill(disk.path(), 256 << 10);
    let mut c = RawConn::connect(&server.addr);
    assert_eq!(c.cmd(&["SET", "first", "1"]), b"+OK\r\n");
    // Fill the disk with the log itself: 500 KB values until a write is refused or
    // stays unanswered.
    let value = "v".repeat(500_000);
    let mut acked = Vec::new();
    let mut pending: Option<String> = None;
    for i in 0..200 {
        let key = format!("big:{i}");
        c.send(&encode(&["SET", &key, &value]));
        match c.try_read_reply(Duration::from_secs(2)) {
            Ok(r) if r == b"+OK\r\n" => acked.push(key),
            Ok(r) => {
                // Refused (Redis and Basalt: MISCONF while the log cannot be written).
                assert!(r.starts_with(b"-MISCONF"), "{}", show(&r));
                break;
            }
            Err(_) => {
                // Held: the write is in the log's hands, waiting for the disk.
                pending = Some(key);
                break;
            }
        }
    }
    let mut admin = RawConn::connect(&server.addr);
    let full = wait_until(Duration::from_secs(10), || {
        field(&parse(&admin.cmd(&["INFO", "persistence"])).text(), "aof_last_write_status").as_deref() == Some("err")
    });
    assert!(full, "the disk never filled ({} writes acknowledged)", acked.len());
    assert!(!acked.is_empty(), "no large write was acknowledged before the disk filled");
    // Space comes back: writes must resume by themselves.
    // Basalt gets back 4 MB: it acknowledged only what the log holds, so that is enough.
    // Redis 7.0.15 under everysec acknowledged writes it had not written (its buffer
    // was 10 MB when the disk filled): it gets the whole disk back, or it cannot
    // catch up.
    if is_basalt() {
        std::fs::remove_file(&spare).expect("remove spare");
    } else {
        std::fs::remove_file(&filler).expect("remove filler");
    }
    let started = Instant::now();
    let back = wait_until(Duration::from_secs(15), || {
        let mut probe = RawConn::connect(&server.addr);
        probe.send(&encode(&["SET", "after", "1"]));
        matches!(probe.try_read_reply(Duration::from_millis(500)), Ok(r) if r == b"+OK\r\n")
    });
    assert!(back, "{appendfsync}: writes did not come back within 15 s of the space returning\n{}", server.log());
    eprintln!("{appendfsync}: writes came back {:.1} s after the space returned", started.elapsed().as_secs_f64());
    if let Some(key) = &pending {
        // The held write was kept, and its reply arrives.
        assert_eq!(c.try_read_reply(Duration::from_secs(10)).ok().as_deref(), Some(&b"+OK\r\n"[..]), "{key}");
        acked.push(key.clone());
    } else {
        c = RawConn::connect(&server.addr);
    }
    assert_eq!(
        field(&parse(&admin.cmd(&["INFO", "persistence"])).text(), "aof_last_write_status").as_deref(),
        Some("ok")
    );
    if !is_basalt() {
        // Redis under everysec replies before its buffer is written (and postpones a
        // write while an fsync runs): what it acknowledged is in the file only once
        // its buffer is empty. (A kill right after `after` was acknowledged lost it
        // once, in CI's run of this suite against Redis.) Basalt's replies wait for
        // the write: it gets no such wait.
        let written = wait_until(Duration::from_secs(10), || {
            field(&parse(&admin.cmd(&["INFO", "persistence"])).text(), "aof_buffer_length").as_deref() == Some("0")
        });
        assert!(written, "Redis's log buffer was not written within 10 s");
    }
    // Nothing acknowledged is lost, across a kill and a restart too (with room to
    // start again).
    server.kill9();
    let _ = std::fs::remove_file(&filler);
    let server = ServerProcess::spawn_in(bin, disk.path(), &flags);
    let mut c2 = RawConn::connect(&server.addr);
    for key in acked.iter().chain(["first".to_string(), "after".to_string()].iter()) {
        let got = c2.cmd(&["EXISTS", key]);
        assert_eq!(got, b":1\r\n", "{key} lost");
    }
    drop(c);
}
