//! File helpers: atomic replacement of a file (temp file, fsync, rename, fsync of the
//! directory), as CONFIG REWRITE and later snapshots and manifests need, and the removal
//! of the temp files a killed process left behind.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Replaces `path` with `data` so that a crash leaves either the old or the new file.
pub fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = OpenOptions::new().write(true).create(true).truncate(true).open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}

/// Removes the temp files that a process killed mid-write left in `dir`: snapshots
/// (`temp-<pid>.rdb`) and atomically replaced files (`.<name>.tmp-<pid>`). Left alone,
/// every SAVE, BGSAVE or AOF rewrite cut short by a crash leaves a whole copy of the
/// data set behind (a crash test once found 4.6 GB of them). A file is removed only
/// when its name ends in a pid that is neither ours nor a live process's, so a second
/// server pointed at the same folder by mistake keeps its own temp file. Returns the
/// names removed, for the log.
pub fn remove_stale_temp_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_file_pid(&name) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if entry.file_type().map(|t| t.is_file()).unwrap_or(false)
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed.push(name);
        }
    }
    removed.sort();
    removed
}

/// The pid in a temp file's name, for the shapes this server writes: `temp-<pid>.rdb`
/// (saves, rewrites), `temp-<pid>.<ms>.rdb` (a replica's full sync received to disk),
/// `.<name>.tmp-<pid>`.
fn temp_file_pid(name: &str) -> Option<u32> {
    let digits = if let Some(rest) = name.strip_prefix("temp-") {
        let rest = rest.strip_suffix(".rdb")?;
        match rest.split_once('.') {
            Some((pid, ms)) if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) => pid,
            Some(_) => return None,
            None => rest,
        }
    } else if name.starts_with('.') {
        name.rsplit_once(".tmp-")?.1
    } else {
        return None;
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_only_our_temp_names() {
        assert_eq!(temp_file_pid("temp-123.rdb"), Some(123));
        assert_eq!(temp_file_pid("temp-123.1795791601186.rdb"), Some(123));
        assert_eq!(temp_file_pid("temp-123.x.rdb"), None);
        assert_eq!(temp_file_pid("temp-123..rdb"), None);
        assert_eq!(temp_file_pid(".appendonly.aof.manifest.tmp-77"), Some(77));
        assert_eq!(temp_file_pid("temp-.rdb"), None);
        assert_eq!(temp_file_pid("temp-12a.rdb"), None);
        assert_eq!(temp_file_pid("temp-123.rdb.bak"), None);
        assert_eq!(temp_file_pid("dump.rdb"), None);
        assert_eq!(temp_file_pid("appendonly.aof.3.incr.aof"), None);
        assert_eq!(temp_file_pid("x.tmp-1"), None);
    }

    #[test]
    fn removes_dead_processes_temp_files_and_keeps_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        // pid_max is at most 2^22, so this pid cannot be alive.
        let dead = 4_999_999u32;
        let live = std::process::id();
        for name in [
            format!("temp-{dead}.rdb"),
            format!(".basalt.conf.tmp-{dead}"),
            format!("temp-{live}.rdb"),
            "dump.rdb".to_string(),
            "temp-x.rdb".to_string(),
        ] {
            std::fs::write(dir.path().join(name), b"x").expect("write");
        }
        let removed = remove_stale_temp_files(dir.path());
        assert_eq!(removed, vec![format!(".basalt.conf.tmp-{dead}"), format!("temp-{dead}.rdb")]);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["dump.rdb".to_string(), format!("temp-{live}.rdb"), "temp-x.rdb".to_string()]);
    }
}
