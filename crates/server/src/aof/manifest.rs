//! Redis 7's multi-part AOF layout: the manifest and the files it names.
//!
//! `appenddirname/` holds one base file (a snapshot: `<name>.<seq>.base.rdb` or, as
//! Basalt writes it until RDB support lands, `<name>.<seq>.base.aof`), incremental logs
//! `<name>.<seq>.incr.aof` replayed in sequence order, and `<name>.manifest`, one line
//! per file: `file <filename> seq <n> type <b|i|h>` (h: history, kept only until
//! deleted). The manifest is replaced atomically: written to a temporary file,
//! fsynced, renamed over the old one, and the directory fsynced.

use std::fmt::Write as _;
use std::path::Path;

/// What a manifest line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Base,
    Incr,
    History,
}

/// One file of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    pub name: String,
    pub seq: u64,
    pub kind: Kind,
}

/// The parsed manifest, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<FileEntry>,
    pub incrs: Vec<FileEntry>,
    pub history: Vec<FileEntry>,
}

impl Manifest {
    /// Parses a manifest; errors are the reason, to be reported with the file name.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut m = Manifest::default();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = crate::config::split_args(line).ok_or_else(|| {
                format!(
                    "Invalid AOF manifest file format (line {}: unbalanced quotes)",
                    n + 1
                )
            })?;
            if words.len() % 2 != 0 {
                return Err(format!("Invalid AOF manifest file format (line {})", n + 1));
            }
            let (mut name, mut seq, mut kind) = (None, None, None);
            for pair in words.chunks(2) {
                match pair[0].as_str() {
                    "file" => name = Some(pair[1].clone()),
                    "seq" => seq = pair[1].parse::<u64>().ok(),
                    "type" => {
                        kind = match pair[1].as_str() {
                            "b" => Some(Kind::Base),
                            "i" => Some(Kind::Incr),
                            "h" => Some(Kind::History),
                            _ => None,
                        }
                    }
                    // Unknown keys are skipped, as Redis does, for forward compatibility.
                    _ => {}
                }
            }
            let (Some(name), Some(seq), Some(kind)) = (name, seq, kind) else {
                return Err(format!("Invalid AOF manifest file format (line {})", n + 1));
            };
            if name.contains('/') {
                return Err(format!(
                    "Invalid AOF manifest file format: file name '{name}' contains a '/'"
                ));
            }
            let entry = FileEntry { name, seq, kind };
            match kind {
                Kind::Base => {
                    if m.base.is_some() {
                        return Err("Found duplicate base file information".into());
                    }
                    m.base = Some(entry);
                }
                Kind::Incr => {
                    if m.incrs.last().is_some_and(|last| last.seq >= seq) {
                        return Err("Found a non-monotonic sequence number".into());
                    }
                    m.incrs.push(entry);
                }
                Kind::History => m.history.push(entry),
            }
        }
        if m.base.is_none() && m.incrs.is_empty() {
            return Err("Found an empty AOF manifest".into());
        }
        Ok(m)
    }

    /// The manifest's text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let line = |s: &mut String, e: &FileEntry, t: &str| {
            let _ = writeln!(s, "file {} seq {} type {t}", e.name, e.seq);
        };
        if let Some(b) = &self.base {
            line(&mut s, b, "b");
        }
        for h in &self.history {
            line(&mut s, h, "h");
        }
        for i in &self.incrs {
            line(&mut s, i, "i");
        }
        s
    }

    /// A fresh layout for `name`: an empty base and the first incremental file.
    pub fn first(name: &str) -> Manifest {
        Manifest {
            base: Some(FileEntry {
                name: format!("{name}.1.base.aof"),
                seq: 1,
                kind: Kind::Base,
            }),
            incrs: vec![FileEntry {
                name: format!("{name}.1.incr.aof"),
                seq: 1,
                kind: Kind::Incr,
            }],
            history: Vec::new(),
        }
    }
}

/// Writes the manifest atomically: temporary file, fsync, rename, fsync of the folder
/// (which also makes files created in the folder before it durable).
pub fn persist(dir: &Path, manifest_name: &str, m: &Manifest) -> std::io::Result<()> {
    crate::fsutil::write_atomically(&dir.join(manifest_name), m.render().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders_redis_manifests() {
        let text = "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n";
        let m = Manifest::parse(text).expect("valid");
        assert_eq!(
            m.base.as_ref().map(|b| b.name.as_str()),
            Some("appendonly.aof.1.base.rdb")
        );
        assert_eq!(m.incrs.len(), 2);
        assert_eq!(m.render(), text);
    }

    #[test]
    fn rejects_what_redis_rejects() {
        assert!(Manifest::parse("").is_err());
        assert!(
            Manifest::parse("file a seq 2 type i\nfile b seq 1 type i\n")
                .expect_err("order")
                .contains("non-monotonic")
        );
        assert!(Manifest::parse("file a seq 1 type b\nfile b seq 2 type b\n").is_err());
        assert!(Manifest::parse("file a seq x type i\n").is_err());
        assert!(Manifest::parse("file ../etc/passwd seq 1 type i\n").is_err());
        assert!(Manifest::parse("file a seq 1\n").is_err());
    }

    #[test]
    fn first_layout_names_match_redis() {
        let m = Manifest::first("appendonly.aof");
        assert_eq!(m.render(), "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n");
    }
}
