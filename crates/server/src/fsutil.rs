//! File helpers: atomic replacement of a file (temp file, fsync, rename, fsync of the
//! directory), as CONFIG REWRITE and later snapshots and manifests need.

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
