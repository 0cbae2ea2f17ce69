//! Start-up with `appendonly yes`: open (or create) the multi-part log, replay it into
//! the keyspace, and hand the last incremental file to the writer.
//!
//! Replay runs every command through the normal dispatcher as a loading client (whose
//! writes are not logged again), each at the time its `#MS:` annotation gives, so
//! expiry decisions and relative TTLs come out as they did the first time. Before the
//! first annotation (files written by Redis, which logs absolute times and explicit
//! DELs) no key expires during replay, as in Redis; keys whose time has passed expire
//! once the server runs.
//!
//! Damage, as Redis 7 handles it: a command cut short at the very end of the last file
//! (or a MULTI without its EXEC there) is cut off the file with a warning that names the
//! file and offset, when `aof-load-truncated` is yes; anywhere else, or with the option
//! off, and for bytes that are not RESP, the start fails with a message naming the file
//! and offset. (Unlike Redis, an incremental file that only empty files follow counts as
//! the last: Basalt names a rewrite's new file in the manifest before its writer has
//! written the old file's last bytes, so a kill inside that write leaves exactly that.)
//! A missing file or an unknown command also stops the start. (An RDB base file is
//! loaded as a snapshot, `load_rdb_base`.)
//!
//! Holes: after a power loss, blocks of the commits that were in flight may have
//! reached the disk in any order (`commit.rs` keeps up to four in flight; the writer
//! thread's fdatasync writes dirty pages in any order), so a block that never landed
//! reads as the zeros the file held before (`prealloc.rs`), and later blocks may hold
//! records. Nothing at or after such a hole was acknowledged (an fdatasync that
//! completed made every earlier write durable), and replaying past it would build a
//! state that never existed, so the log ends at the hole. Basalt writes each piece of
//! the log after a checksum line (`segment.rs`), checked before any of the piece is
//! applied: one that fails over a zero-filled aligned block ([`HOLE_BLOCK`]), or that
//! the file's end cuts short, is a torn tail, cut as one; one that fails over other
//! bytes is damage (rot, not a power loss), and the start stops. (Two faults in one
//! piece, a value that really held an aligned block of zeros and a rotted byte, would
//! be taken for a hole: the log cut there rather than the start refused.) In a log
//! without those lines (Redis's, an older Basalt's), zeros at a command's start followed
//! by more data, or a command that is whole RESP up to a zero-filled aligned block, are
//! a hole too; a hole inside a value cannot be seen there.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use resp::{Limits, RequestParser};

use super::manifest::{self, Manifest};
use super::writer::Target;
use crate::apply::Apply;
use crate::shared::Shared;

use super::segment;

/// Why the log could not be opened or replayed; the text is logged and the start fails.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LoadError(pub String);

fn io_err(what: &str, path: &Path, e: std::io::Error) -> LoadError {
    LoadError(format!("{what} {}: {e}", path.display()))
}

/// Opens or creates the log under `dir`, replays it, and returns the file the writer
/// appends to.
pub fn open_and_replay(shared: &Arc<Shared>, dir: &Path, apply: &mut dyn Apply) -> Result<Target, LoadError> {
    let (dirname, filename, load_truncated) = {
        let c = shared.config.read();
        (
            c.appenddirname.clone(),
            c.appendfilename.clone(),
            c.aof_load_truncated,
        )
    };
    let aof_dir = dir.join(&dirname);
    let manifest_name = format!("{filename}.manifest");
    let manifest_path = aof_dir.join(&manifest_name);
    if !manifest_path.exists() {
        let target = create(&aof_dir, &filename, &manifest_name)?;
        remember(shared, &aof_dir, &filename, Manifest::first(&filename));
        return Ok(target);
    }
    let m = read_manifest(&manifest_path)?;
    let mut files: Vec<(&str, bool)> = Vec::new();
    if let Some(b) = &m.base {
        files.push((b.name.as_str(), true));
    }
    files.extend(m.incrs.iter().map(|i| (i.name.as_str(), false)));
    for (name, _) in &files {
        let p = aof_dir.join(name);
        if !p.exists() {
            return Err(LoadError(format!("The AOF file {name} doesn't exist")));
        }
    }
    let started = Instant::now();
    // INFO's loading_total_bytes: the files' sizes (Redis counts the same).
    shared.loading.set_total(files.iter().map(|(n, _)| std::fs::metadata(aof_dir.join(n)).map_or(0, |m| m.len())).sum());
    let mut loader = Loader::new(shared, apply);
    let last = files.len() - 1;
    for (i, (name, is_base)) in files.iter().enumerate() {
        let path = aof_dir.join(name);
        if *is_base && name.ends_with(".rdb") {
            load_rdb_base(shared, &path, name)?;
            crate::log::notice(&format!(
                "DB loaded from base file {name}: {:.3} seconds",
                started.elapsed().as_secs_f64()
            ));
            continue;
        }
        // An incremental file that only empty ones follow ends the log as the last
        // does: a rewrite names its new file in the manifest before the writer has
        // written the old one's last bytes (`rewrite::open_next`), so a kill inside that
        // write leaves the old file torn and the new one empty (or only zero-filled).
        let ends_the_log = i == last || (!*is_base && later_files_hold_no_data(&aof_dir, &files[i + 1..])?);
        if ends_the_log && i != last {
            crate::log::notice(&format!(
                "The AOF files after {name} hold no data yet (a rewrite had just begun): {name} is read as the log's last"
            ));
        }
        let damage = match (ends_the_log, load_truncated) {
            (false, _) => Damage::NotLast,
            (true, true) => Damage::Cut,
            (true, false) => Damage::NoTruncate,
        };
        loader.replay(&path, name, damage)?;
        crate::log::notice(&format!(
            "DB loaded from {} file {name}: {:.3} seconds",
            if *is_base { "base" } else { "incr" },
            started.elapsed().as_secs_f64()
        ));
    }
    crate::log::notice(&format!(
        "DB loaded from append only file: {:.3} seconds",
        started.elapsed().as_secs_f64()
    ));
    let total: u64 = files
        .iter()
        .map(|(n, _)| {
            std::fs::metadata(aof_dir.join(n))
                .map(|m| m.len())
                .unwrap_or(0)
        })
        .sum();
    if let Some(aof) = shared.aof.as_ref() {
        let base = m.base.as_ref().map_or(0, |b| {
            std::fs::metadata(aof_dir.join(&b.name))
                .map(|m| m.len())
                .unwrap_or(0)
        });
        aof.base_size
            .store(base, std::sync::atomic::Ordering::Relaxed);
        aof.start_size
            .store(total, std::sync::atomic::Ordering::Relaxed);
    }
    remember(shared, &aof_dir, &filename, m.clone());
    // New records go at the end of the last incremental file, as in Redis 7.
    let last_incr = match m.incrs.last() {
        Some(i) => i.name.clone(),
        None => {
            // A manifest with only a base: start the first incremental file.
            let mut m2 = m.clone();
            let seq = 1;
            let name = format!("{filename}.{seq}.incr.aof");
            File::create(aof_dir.join(&name))
                .map_err(|e| io_err("Can't create", &aof_dir.join(&name), e))?;
            m2.incrs.push(manifest::FileEntry {
                name: name.clone(),
                seq,
                kind: manifest::Kind::Incr,
            });
            manifest::persist(&aof_dir, &manifest_name, &m2)
                .map_err(|e| io_err("Can't write the AOF manifest", &manifest_path, e))?;
            remember(shared, &aof_dir, &filename, m2);
            name
        }
    };
    open_target(&aof_dir.join(&last_incr), &last_incr)
}

/// Whether every one of `files` (the manifest's files after one) is empty or holds only
/// zeros (space preallocated ahead of the writer, `prealloc.rs`).
fn later_files_hold_no_data(aof_dir: &Path, files: &[(&str, bool)]) -> Result<bool, LoadError> {
    let mut chunk = vec![0u8; 1 << 16];
    for (name, _) in files {
        let path = aof_dir.join(name);
        let mut f = File::open(&path).map_err(|e| io_err("Can't open the append-only file", &path, e))?;
        loop {
            let n = f.read(&mut chunk).map_err(|e| io_err("Error reading", &path, e))?;
            if n == 0 {
                break;
            }
            if chunk[..n].iter().any(|&b| b != 0) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Keeps what the manifest on disk says, for log rewrites.
/// Reads and parses a manifest; errors name the file.
fn read_manifest(path: &Path) -> Result<Manifest, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| io_err("Can't read the AOF manifest", path, e))?;
    Manifest::parse(&text)
        .map_err(|e| LoadError(format!("{e} in the AOF manifest {}", path.display())))
}

fn remember(shared: &Shared, dir: &Path, name: &str, m: Manifest) {
    if let Some(aof) = shared.aof.as_ref() {
        *aof.files.lock() = Some(super::files::Files::new(dir.to_path_buf(), name.to_string(), m));
    }
}

/// A base file in RDB format (what BGREWRITEAOF writes, and Redis 7 with
/// `aof-use-rdb-preamble yes`).
fn load_rdb_base(shared: &Shared, path: &Path, name: &str) -> Result<(), LoadError> {
    let file = File::open(path).map_err(|e| io_err("Can't open the AOF base file", path, e))?;
    crate::snapshot::load_into(shared, shared.load_reader(std::io::BufReader::with_capacity(1 << 20, file)))
        .map(|_| ())
        .map_err(|e| LoadError(format!("Error loading the AOF base file {name}: {e}")))
}

/// DEBUG LOADAOF: replays the log named in the manifest into the (emptied) keyspace,
/// while the caller holds every loop's gate. Unlike start-up it changes no file: the
/// writer keeps appending to the last one, whose zero-filled end is skipped.
pub fn reload(shared: &Shared, dir: &Path, apply: &mut dyn Apply) -> Result<(), LoadError> {
    let (dirname, filename) = {
        let c = shared.config.read();
        (c.appenddirname.clone(), c.appendfilename.clone())
    };
    let aof_dir = dir.join(&dirname);
    let manifest_path = aof_dir.join(format!("{filename}.manifest"));
    let m = read_manifest(&manifest_path)?;
    // Keys that expire during the replay are not logged again (`Aof::log_expiry`).
    struct Replaying<'a>(Option<&'a super::Aof>);
    impl Drop for Replaying<'_> {
        fn drop(&mut self) {
            if let Some(aof) = self.0 {
                aof.replaying.store(false, std::sync::atomic::Ordering::Release);
            }
        }
    }
    if let Some(aof) = shared.aof.as_ref() {
        aof.replaying.store(true, std::sync::atomic::Ordering::Release);
    }
    let _replaying = Replaying(shared.aof.as_deref());
    if let Some(b) = m.base.iter().find(|b| b.name.ends_with(".rdb")) {
        load_rdb_base(shared, &aof_dir.join(&b.name), &b.name)?;
    }
    let mut loader = Loader::new(shared, apply);
    for entry in m
        .base
        .iter()
        .filter(|b| !b.name.ends_with(".rdb"))
        .chain(&m.incrs)
    {
        loader.replay(&aof_dir.join(&entry.name), &entry.name, Damage::Refuse)?;
    }
    Ok(())
}

/// First start with the log on: an empty base, the first incremental file, the manifest.
fn create(aof_dir: &Path, filename: &str, manifest_name: &str) -> Result<Target, LoadError> {
    std::fs::create_dir_all(aof_dir)
        .map_err(|e| io_err("Can't create the append-only folder", aof_dir, e))?;
    let m = Manifest::first(filename);
    for entry in m.base.iter().chain(&m.incrs) {
        let p = aof_dir.join(&entry.name);
        let f = File::create(&p).map_err(|e| io_err("Can't create", &p, e))?;
        f.sync_all().map_err(|e| io_err("Can't sync", &p, e))?;
    }
    manifest::persist(aof_dir, manifest_name, &m).map_err(|e| {
        io_err(
            "Can't write the AOF manifest",
            &aof_dir.join(manifest_name),
            e,
        )
    })?;
    crate::log::notice(&format!(
        "Creating AOF incr file {} on server start",
        m.incrs[0].name
    ));
    let name = m.incrs[0].name.clone();
    open_target(&aof_dir.join(&name), &name)
}

fn open_target(path: &PathBuf, name: &str) -> Result<Target, LoadError> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io_err("Can't open the append-only file", path, e))?;
    let len = file
        .metadata()
        .map_err(|e| io_err("Can't stat", path, e))?
        .len();
    Ok(Target {
        file,
        path: path.clone(),
        name: name.to_string(),
        len,
    })
}

/// What replay does with a file that does not end with a whole command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    /// The last file, `aof-load-truncated yes`: cut it back to its last whole command
    /// (also cuts off zero-filled space after it).
    Cut,
    /// Not the last file: a torn command there stops the start.
    NotLast,
    /// `aof-load-truncated no`: a torn command stops the start.
    NoTruncate,
    /// DEBUG LOADAOF on the live log: change no file; a torn command is an error.
    Refuse,
}

/// Replays files into the keyspace as a loading client.
struct Loader<'a> {
    shared: &'a Shared,
    /// Runs each command (the dispatcher, given from above).
    apply: &'a mut dyn Apply,
    /// The time of the records being replayed (0 before the first annotation: nothing
    /// expires then).
    now_ms: i64,
}

impl<'a> Loader<'a> {
    fn new(shared: &'a Shared, apply: &'a mut dyn Apply) -> Loader<'a> {
        Loader { shared, apply, now_ms: 0 }
    }

    fn replay(&mut self, path: &Path, name: &str, damage: Damage) -> Result<(), LoadError> {
        let mut file =
            File::open(path).map_err(|e| io_err("Can't open the append-only file", path, e))?;
        let max_bulk = self.shared.config.read().proto_max_bulk_len;
        let mut parser = RequestParser::new(Limits {
            max_bulk_len: max_bulk,
            ..Limits::default()
        });
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
        let mut pos = 0usize;
        // File offset of buf[0].
        let mut base = 0u64;
        let mut eof = false;
        // Offset after the last command applied outside a transaction, and where the
        // open MULTI began.
        let mut valid_up_to = 0u64;
        let mut multi_start: Option<u64> = None;
        let mut at_boundary = true;
        // Where the zeros skipped at a command's start began (see the header: data
        // after them is a hole).
        let mut zeros_at: Option<u64> = None;
        let mut need_more = false;
        // Set when replay stopped at a torn command before the end of the file.
        let mut torn_len: Option<u64> = None;
        loop {
            let input = &buf[pos..];
            if at_boundary && !input.is_empty() {
                if input[0] == 0 {
                    // Zero-filled space the writer had not reached (prealloc.rs):
                    // skipped, and cut off below if nothing follows it.
                    zeros_at.get_or_insert(base + pos as u64);
                    pos += input.iter().position(|&b| b != 0).unwrap_or(input.len());
                    continue;
                }
                if let Some(hole) = zeros_at {
                    // Data after zeros: a hole that a power loss left (see the header).
                    crate::log::warning(&format!(
                        "The AOF {name} has zeros at offset {hole} and data after them: blocks written before a power loss that never reached the disk; the log ends there"
                    ));
                    at_boundary = false;
                    torn_len = Some(file_len_of(path)?);
                    break;
                }
                if input[0] == b'#' {
                    match memchr::memchr(b'\n', input) {
                        Some(nl) if input.starts_with(b"#SEG:") => {
                            // A segment (`segment.rs`): its bytes are checked before
                            // any of them is applied.
                            let offset = base + pos as u64;
                            let Some((len, crc)) = segment::parse_header(&input[..=nl]) else {
                                return Err(bad_format(name, offset));
                            };
                            if len as u64 > max_bulk.saturating_mul(4).saturating_add(2 * super::TAIL_LIMIT) {
                                return Err(bad_format(name, offset));
                            }
                            let body = nl + 1..nl + 1 + len;
                            if input.len() < body.end && !eof {
                                // Read on until the segment is whole (or the file ends).
                                need_more = true;
                            } else if input.len() < body.end && holds_a_whole_segment(&input[nl + 1..], max_bulk) {
                                // A length that runs past a later whole segment: the
                                // header rotted; this is no torn tail.
                                return Err(bad_format(name, offset));
                            } else if input.len() < body.end || !segment::verify(&input[body.clone()], crc) {
                                let end = offset + (body.end as u64);
                                if input.len() >= body.end && !zero_block_within(path, offset, end)? {
                                    return Err(LoadError(format!(
                                        "Bad file format reading the append only file {name} at offset {offset} (the checksum of the segment there fails): make a backup of your AOF file, then repair it (redis-check-aof --fix <filename.manifest>)"
                                    )));
                                }
                                if input.len() >= body.end {
                                    crate::log::warning(&format!(
                                        "The AOF {name} has a zero-filled block in the segment at offset {offset} (its checksum fails): blocks written before a power loss that never reached the disk; the log ends there"
                                    ));
                                }
                                // Cut short at the file's end, or holed: a torn tail.
                                at_boundary = false;
                                torn_len = Some(file_len_of(path)?);
                                break;
                            } else {
                                pos += nl + 1;
                                if multi_start.is_none() {
                                    valid_up_to = base + pos as u64;
                                }
                                continue;
                            }
                        }
                        Some(nl) => {
                            self.annotation(&input[..nl]);
                            pos += nl + 1;
                            if multi_start.is_none() {
                                valid_up_to = base + pos as u64;
                            }
                            continue;
                        }
                        // The rest of the line is in the next read (never hand it to
                        // the command parser, which would take it for an inline
                        // command).
                        None if !eof => need_more = true,
                        None => {
                            at_boundary = false;
                            break;
                        }
                    }
                } else if input[0] != b'*' {
                    return Err(bad_format(name, base + pos as u64));
                }
            }
            let parsed = if input.is_empty() || need_more {
                Ok(None)
            } else {
                parser.parse(input)
            };
            need_more = false;
            // A command whose bytes are not RESP, or whose bulk values are not each
            // followed by CRLF (Redis's network parser skips those two bytes unread; a
            // log cut inside a value and then zero-filled must not pass as a command).
            let parsed = match parsed {
                Ok(Some(_)) if !bulks_end_with_crlf(&parser, input) => Err(()),
                Ok(r) => Ok(r),
                Err(_) => Err(()),
            };
            match parsed {
                Ok(Some(n)) => {
                    at_boundary = true;
                    let argc = parser.argc();
                    let offset = base + pos as u64;
                    if argc > 0 {
                        let args: Vec<&[u8]> = (0..argc).map(|i| parser.arg(input, i)).collect();
                        if !self.apply.knows(args[0]) {
                            return Err(LoadError(format!(
                                "Unknown command '{}' reading the append only file {name}",
                                String::from_utf8_lossy(&args[0][..args[0].len().min(128)])
                            )));
                        }
                        if args[0].eq_ignore_ascii_case(b"multi") {
                            multi_start = Some(offset);
                        }
                        let is_exec = args[0].eq_ignore_ascii_case(b"exec");
                        self.execute(&args);
                        if is_exec {
                            multi_start = None;
                        }
                    }
                    pos += n;
                    if multi_start.is_none() {
                        valid_up_to = base + pos as u64;
                    }
                }
                Ok(None) => {
                    at_boundary = input.is_empty() || input[0] == b'#';
                    if eof {
                        break;
                    }
                    // Keep the unconsumed bytes at the start of the buffer and read more.
                    if pos > 0 {
                        buf.drain(..pos);
                        base += pos as u64;
                        pos = 0;
                    }
                    let len = buf.len();
                    buf.resize(len + (1 << 20), 0);
                    // Counted for INFO's loading_* fields; a shutdown asked for
                    // meanwhile stops the replay here (no file is changed).
                    let n = self
                        .shared
                        .load_reader(&mut file)
                        .read(&mut buf[len..])
                        .map_err(|e| io_err("Error reading", path, e))?;
                    buf.truncate(len + n);
                    eof = n == 0;
                }
                Err(()) => {
                    // A torn write: a command's beginning, then the zeros the writer
                    // had not yet written over (or nothing). Anything else is damage.
                    let offset = base + pos as u64;
                    if !tail_is_torn(path, offset, max_bulk)? {
                        match torn_by_hole(path, offset, max_bulk)? {
                            Some(hole) => crate::log::warning(&format!(
                                "The AOF {name} has a zero-filled block at offset {hole} inside the command at offset {offset}, and data after it: blocks written before a power loss that never reached the disk; the log ends there"
                            )),
                            None => return Err(bad_format(name, offset)),
                        }
                    }
                    at_boundary = false;
                    // The whole file was looked at: what follows is handled as a cut.
                    torn_len = Some(file_len_of(path)?);
                    break;
                }
            }
        }
        let file_len = torn_len.unwrap_or(base + buf.len() as u64);
        if valid_up_to == file_len {
            return Ok(());
        }
        if at_boundary && multi_start.is_none() {
            // Only zeros after the last command: preallocated space of a run that
            // ended without a clean stop (or of the live writer, for DEBUG LOADAOF).
            // At start-up it is cut off so that the file ends with a record.
            if damage != Damage::Cut {
                return Ok(());
            }
            cut(path, valid_up_to)?;
            crate::log::notice(&format!(
                "Removed {} bytes of preallocated space after the last command of {name}",
                file_len - valid_up_to
            ));
            return Ok(());
        }
        // The file ends inside a command or inside a MULTI without EXEC.
        if multi_start.is_some() {
            crate::log::warning(&format!(
                "Revert incomplete MULTI/EXEC transaction in AOF file {name}"
            ));
            self.apply.drop_transaction();
        }
        match damage {
            Damage::Cut => {}
            Damage::NotLast => {
                return Err(LoadError(format!(
                    "Fatal error: the truncated file is not the last file: {name} ends inside a command at offset {valid_up_to}"
                )))
            }
            Damage::NoTruncate => {
                return Err(LoadError(format!(
                    "Unexpected end of file reading the append only file {name} at offset {valid_up_to}. Make a backup of the file, or set 'aof-load-truncated' to yes and restart the server."
                )))
            }
            Damage::Refuse => {
                return Err(LoadError(format!("The append only file {name} ends inside a command at offset {valid_up_to}")))
            }
        }
        crate::log::warning(&format!(
            "!!! Warning: short read while loading the AOF file {name}!!!"
        ));
        crate::log::warning(&format!(
            "!!! Truncating the AOF {name} at offset {valid_up_to} !!!"
        ));
        cut(path, valid_up_to)?;
        crate::log::warning(&format!(
            "AOF {name} loaded anyway because aof-load-truncated is enabled"
        ));
        Ok(())
    }

    /// `#MS:<unix ms>` sets the replay time; other annotations (Redis's `#TS:`) are
    /// skipped as Redis skips them.
    fn annotation(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(ms) = line.strip_prefix(b"#MS:") {
            if let Some(ms) = std::str::from_utf8(ms)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
            {
                self.now_ms = ms;
            }
        }
    }

    fn execute(&mut self, args: &[&[u8]]) {
        self.apply.apply(args, self.now_ms);
    }
}

/// Whether every bulk argument of the multibulk request just parsed from `input` is
/// followed by `\r\n`.
fn bulks_end_with_crlf(parser: &RequestParser, input: &[u8]) -> bool {
    parser.args(input).all(|arg| {
        // Each argument is a slice of `input`: its end is its offset plus its length.
        let end = arg.as_ptr() as usize - input.as_ptr() as usize + arg.len();
        input.get(end..end + 2) == Some(&b"\r\n"[..])
    })
}

fn file_len_of(path: &Path) -> Result<u64, LoadError> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| io_err("Can't stat", path, e))
}

/// Whether the file from `from` to its end is a torn write: the beginning of one
/// command, possibly followed by NUL bytes only (the preallocated space of
/// `prealloc.rs`). The bytes before the trailing NULs must parse as an incomplete
/// request; a complete one, a malformed one, or data after a hole of zeros is damage.
fn tail_is_torn(path: &Path, from: u64, max_bulk: u64) -> Result<bool, LoadError> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path).map_err(|e| io_err("Can't open", path, e))?;
    file.seek(SeekFrom::Start(from))
        .map_err(|e| io_err("Error reading", path, e))?;
    // The end of the last non-zero byte, found in chunks.
    let mut chunk = vec![0u8; 1 << 20];
    let mut at = from;
    let mut data_end = from;
    loop {
        let n = file
            .read(&mut chunk)
            .map_err(|e| io_err("Error reading", path, e))?;
        if n == 0 {
            break;
        }
        if let Some(last) = chunk[..n].iter().rposition(|&b| b != 0) {
            data_end = at + last as u64 + 1;
        }
        at += n as u64;
    }
    // One command is at most a few bulk strings of `proto-max-bulk-len`: a longer run
    // of data is not the start of one command.
    let len = data_end - from;
    if len == 0 || len > max_bulk.saturating_mul(4).saturating_add(1 << 20) {
        return Ok(len == 0);
    }
    let mut bytes = vec![0u8; len as usize];
    file.seek(SeekFrom::Start(from))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|e| io_err("Error reading", path, e))?;
    Ok(is_command_start(&bytes, max_bulk))
}

/// Whether `bytes` (what follows a segment's header line up to the file's end) hold,
/// at a command's boundary, a whole segment whose checksum holds: never the case after
/// a header whose segment the file's end cut short. Walked command by command, so that
/// a client's value that looks like a segment is not taken for one.
fn holds_a_whole_segment(bytes: &[u8], max_bulk: u64) -> bool {
    let mut parser = RequestParser::new(Limits {
        max_bulk_len: max_bulk,
        ..Limits::default()
    });
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        match rest[0] {
            0 => at += rest.iter().position(|&b| b != 0).unwrap_or(rest.len()),
            b'#' => {
                let Some(nl) = memchr::memchr(b'\n', rest) else { return false };
                if let Some((len, crc)) = segment::parse_header(&rest[..=nl]) {
                    if rest.get(nl + 1..nl + 1 + len).is_some_and(|body| segment::verify(body, crc)) {
                        return true;
                    }
                }
                at += nl + 1;
            }
            _ => match parser.parse(rest) {
                Ok(Some(n)) => at += n,
                _ => return false,
            },
        }
    }
    false
}

/// Whether a whole [`HOLE_BLOCK`] of zeros overlaps the file from `from` to `to`: the
/// mark of a block that never reached the disk, not of bytes that rotted.
fn zero_block_within(path: &Path, from: u64, to: u64) -> Result<bool, LoadError> {
    use std::os::unix::fs::FileExt;
    let file = File::open(path).map_err(|e| io_err("Can't open", path, e))?;
    let mut block = vec![0u8; HOLE_BLOCK as usize];
    let mut at = from - from % HOLE_BLOCK;
    while at < to {
        match file.read_exact_at(&mut block, at) {
            Ok(()) if block.iter().all(|&b| b == 0) => return Ok(true),
            Ok(()) => {}
            // The file ends inside this block.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(io_err("Error reading", path, e)),
        }
        at += HOLE_BLOCK;
    }
    Ok(false)
}

/// The smallest unit a disk writes whole: a block that did not land is this many zero
/// bytes at an offset that is a multiple of it (a device's logical block, 512 bytes or
/// more; a 4096-byte block is eight of these).
const HOLE_BLOCK: u64 = 512;

/// Whether the command at `from` (which did not parse: see `replay`) is cut by a hole:
/// its bytes up to the first zero-filled [`HOLE_BLOCK`] after it, zeros before that
/// block left off, are the valid beginning of one command. Returns the block's offset.
/// Non-zero bytes that are not RESP before any such block are damage, not a hole.
fn torn_by_hole(path: &Path, from: u64, max_bulk: u64) -> Result<Option<u64>, LoadError> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path).map_err(|e| io_err("Can't open", path, e))?;
    let start = from - from % HOLE_BLOCK;
    file.seek(SeekFrom::Start(start))
        .map_err(|e| io_err("Error reading", path, e))?;
    // As in `tail_is_torn`: one command is at most a few bulk strings.
    let limit = max_bulk.saturating_mul(4).saturating_add(1 << 20);
    let mut bytes = Vec::new();
    let mut block = vec![0u8; HOLE_BLOCK as usize];
    let mut at = start;
    while at - start <= limit {
        let mut got = 0;
        while got < block.len() {
            let n = file
                .read(&mut block[got..])
                .map_err(|e| io_err("Error reading", path, e))?;
            if n == 0 {
                break;
            }
            got += n;
        }
        // A whole block of zeros after the command's start (a partial last block of
        // zeros is the file's end, which `tail_is_torn` judged).
        if got == block.len() && at >= from && block.iter().all(|&b| b == 0) {
            let data = &bytes[..bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1)];
            return Ok((!data.is_empty() && is_command_start(data, max_bulk)).then_some(at));
        }
        if got < block.len() {
            return Ok(None);
        }
        let skip = from.saturating_sub(at).min(HOLE_BLOCK) as usize;
        bytes.extend_from_slice(&block[skip..]);
        at += HOLE_BLOCK;
    }
    Ok(None)
}

/// Whether `bytes` are the beginning of one command, valid as far as they go.
fn is_command_start(bytes: &[u8], max_bulk: u64) -> bool {
    if bytes.first() != Some(&b'*') {
        return false;
    }
    let mut parser = RequestParser::new(Limits {
        max_bulk_len: max_bulk,
        ..Limits::default()
    });
    matches!(parser.parse(bytes), Ok(None))
}

/// Cuts a log file back to `len` bytes and makes that durable.
fn cut(path: &Path, len: u64) -> Result<(), LoadError> {
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io_err("Can't open", path, e))?;
    f.set_len(len)
        .map_err(|e| io_err("Error truncating the AOF file", path, e))?;
    f.sync_all().map_err(|e| io_err("Can't sync", path, e))
}

fn bad_format(name: &str, offset: u64) -> LoadError {
    LoadError(format!(
        "Bad file format reading the append only file {name} at offset {offset}: make a backup of your AOF file, then repair it (redis-check-aof --fix <filename.manifest>)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::testing::Harness;
    use crate::config::Config;

    fn harness() -> Harness {
        Harness::with_config(Config {
            appendonly: true,
            ..Config::default()
        })
    }

    fn cmd(args: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        resp::encode::array_len(&mut out, args.len());
        for a in args {
            resp::encode::bulk(&mut out, a.as_bytes());
        }
        out
    }

    /// Replays `bytes` as the last file of a log; returns the result and the file's
    /// length afterwards.
    fn replay(h: &Harness, bytes: &[u8], is_last: bool) -> (Result<(), LoadError>, u64) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("appendonly.aof.1.incr.aof");
        std::fs::write(&path, bytes).expect("write");
        let damage = if is_last {
            Damage::Cut
        } else {
            Damage::NotLast
        };
        let mut replayer = crate::command::replay::Replayer::new(&h.shared, crate::command::registry::table(), "aof-loader");
        let r = Loader::new(&h.shared, &mut replayer).replay(&path, "appendonly.aof.1.incr.aof", damage);
        let len = std::fs::metadata(&path).expect("stat").len();
        (r, len)
    }

    #[test]
    fn records_replay_at_the_time_they_first_ran() {
        // SET k 5 PX 300 at t=1000, INCR k at t=1500: the key had expired, so INCR
        // made a fresh 1 without a TTL. Replayed at their own times, the same happens.
        let mut h = harness();
        let mut f = b"#MS:1000\r\n".to_vec();
        f.extend(cmd(&["SET", "k", "5", "PX", "300"]));
        f.extend(b"#MS:1500\r\n");
        f.extend(cmd(&["INCR", "k"]));
        // Before the time passes, the relative TTL is kept as it was first computed.
        f.extend(cmd(&["SET", "t", "v", "EX", "2000000000"]));
        let (r, _) = replay(&h, &f, true);
        r.expect("replay");
        assert_eq!(h.text("GET k"), "1");
        assert_eq!(h.text("PTTL k"), "-1");
        assert_eq!(h.text("PEXPIRETIME t"), "2000000001500");
    }

    #[test]
    fn without_time_annotations_nothing_expires_during_replay() {
        // Redis's own files: absolute times, explicit DELs; keys expire after load.
        let mut h = harness();
        let mut f = cmd(&["SET", "k", "5", "PXAT", "1000"]);
        f.extend(cmd(&["INCR", "k"]));
        let (r, _) = replay(&h, &f, true);
        r.expect("replay");
        assert_eq!(
            h.text("PEXPIRETIME k"),
            "-2",
            "expired by the harness clock after load"
        );
    }

    #[test]
    fn torn_tail_is_cut_back_to_the_last_whole_command() {
        let mut h = harness();
        let good = cmd(&["SET", "a", "1"]);
        let mut f = good.clone();
        f.extend(b"*3\r\n$3\r\nSET\r\n$1\r\nb");
        let (r, len) = replay(&h, &f, true);
        r.expect("loaded anyway");
        assert_eq!(len, good.len() as u64);
        assert_eq!(h.text("GET a"), "1");
        assert_eq!(h.text("EXISTS b"), "0");
    }

    #[test]
    fn a_multi_without_exec_at_the_end_is_dropped() {
        let mut h = harness();
        let good = cmd(&["SET", "a", "1"]);
        let mut f = good.clone();
        f.extend(cmd(&["MULTI"]));
        f.extend(cmd(&["SET", "b", "2"]));
        let (r, len) = replay(&h, &f, true);
        r.expect("loaded anyway");
        assert_eq!(len, good.len() as u64);
        assert_eq!(h.text("EXISTS b"), "0");
        // A whole transaction is applied.
        let mut f2 = cmd(&["MULTI"]);
        f2.extend(cmd(&["SET", "c", "3"]));
        f2.extend(cmd(&["EXEC"]));
        replay(&h, &f2, true).0.expect("replay");
        assert_eq!(h.text("GET c"), "3");
    }

    #[test]
    fn damage_that_is_not_a_torn_tail_stops_the_start() {
        let h = harness();
        let mut f = cmd(&["SET", "a", "1"]);
        f.extend(b"xyz\r\n");
        f.extend(cmd(&["SET", "b", "2"]));
        let err = replay(&h, &f, true).0.expect_err("bad format").to_string();
        assert!(err.contains("Bad file format reading the append only file appendonly.aof.1.incr.aof at offset 27"), "{err}");

        let err = replay(&h, &cmd(&["NOSUCHCMD", "x"]), true)
            .0
            .expect_err("unknown")
            .to_string();
        assert!(err.contains("Unknown command 'NOSUCHCMD'"), "{err}");

        let mut torn = cmd(&["SET", "a", "1"]);
        torn.extend(b"*3\r\n$3\r\nSET");
        let err = replay(&h, &torn, false)
            .0
            .expect_err("not last")
            .to_string();
        assert!(
            err.contains("the truncated file is not the last file"),
            "{err}"
        );
    }

    #[test]
    fn zero_filled_space_is_skipped_and_cut_off() {
        let mut h = harness();
        let good = cmd(&["SET", "a", "1"]);
        // A clean run that crashed: commands, then preallocated zeros.
        let mut f = good.clone();
        f.extend(vec![0u8; 10_000]);
        let (r, len) = replay(&h, &f, true);
        r.expect("loaded");
        assert_eq!(len, good.len() as u64);
        // Commands after the zeros: a hole that a power loss left (blocks of commits
        // in flight that never landed). Nothing after it was acknowledged, and applying
        // it would skip what the hole held: the log ends at the hole.
        let mut f = good.clone();
        f.extend(vec![0u8; 100]);
        f.extend(cmd(&["SET", "b", "2"]));
        f.extend(b"*2\r\n$3\r\nDEL");
        let (r, len) = replay(&h, &f, true);
        r.expect("loaded up to the hole");
        assert_eq!(h.text("EXISTS b"), "0");
        assert_eq!(len, good.len() as u64);
        // Not in a file that is not the last, nor with aof-load-truncated no.
        let err = replay(&harness(), &f, false).0.expect_err("not last").to_string();
        assert!(err.contains("the truncated file is not the last file"), "{err}");
    }

    /// Records as the writer frames them: one segment, its checksum line first.
    fn segment_of(records: &[u8]) -> Vec<u8> {
        let mut seg = super::segment::placeholder().to_vec();
        seg.extend_from_slice(records);
        super::segment::seal(&mut seg);
        seg
    }

    /// A power loss with commits in flight: a block of a later segment never reached
    /// the disk (it reads as zeros), even inside a value where the command still
    /// parses. The log ends at that segment; the segments before it are applied. A
    /// segment cut short at the file's end is a torn tail too. Non-zero bytes where the
    /// checksum fails are damage: the start stops.
    #[test]
    fn a_segment_with_a_block_that_never_landed_ends_the_log() {
        let first = segment_of(&[cmd(&["SET", "a", "1"]), cmd(&["SET", "b", "2"])].concat());
        let value = "v".repeat(3000);
        let second = segment_of(&[cmd(&["SET", "big", &value]), cmd(&["SET", "later", "x"]).repeat(40)].concat());
        let third = segment_of(&cmd(&["SET", "last", "y"]));
        let whole = [first.clone(), second.clone(), third.clone()].concat();
        // Untouched: everything is applied.
        let mut h = harness();
        let (r, len) = replay(&h, &whole, true);
        r.expect("loaded");
        assert_eq!(len, whole.len() as u64);
        assert_eq!(h.text("GET last"), "y");
        // A block inside the big value reads as zeros (the command still parses).
        let hole = (first.len() + 1024) / 512 * 512;
        let mut f = whole.clone();
        f[hole..hole + 512].fill(0);
        let mut h = harness();
        let (r, len) = replay(&h, &f, true);
        r.expect("loaded up to the holed segment");
        assert_eq!(len, first.len() as u64);
        assert_eq!(h.text("GET b"), "2");
        assert_eq!(h.text("EXISTS big"), "0");
        assert_eq!(h.text("EXISTS last"), "0");
        // The file ends inside the second segment.
        let mut h = harness();
        let (r, len) = replay(&h, &whole[..first.len() + 100], true);
        r.expect("torn tail cut");
        assert_eq!(len, first.len() as u64);
        assert_eq!(h.text("EXISTS big"), "0");
        // A rotted length that runs past the later segments: damage, not a torn tail.
        let mut f = whole.clone();
        f[first.len() + 8] = b'1';
        let err = replay(&harness(), &f, true).0.expect_err("damage").to_string();
        assert!(err.contains("Bad file format"), "{err}");
        // A client's value that looks like a whole segment, inside a last segment that
        // the file's end cut short: still a torn tail.
        let fake = {
            let mut f = super::segment::placeholder().to_vec();
            f.extend_from_slice(b"hello");
            super::segment::seal(&mut f);
            String::from_utf8(f).expect("ascii")
        };
        let tricky = segment_of(&[cmd(&["SET", "fake", &fake]), cmd(&["SET", "z", "1"])].concat());
        let f = [first.clone(), tricky[..tricky.len() - 5].to_vec()].concat();
        let mut h = harness();
        let (r, len) = replay(&h, &f, true);
        r.expect("torn tail cut");
        assert_eq!(len, first.len() as u64);
        assert_eq!(h.text("EXISTS fake"), "0");
        // Rotted bytes (not a zero block): damage, the start stops.
        let mut f = whole.clone();
        f[first.len() + 2000] ^= 0x20;
        let err = replay(&harness(), &f, true).0.expect_err("damage").to_string();
        assert!(err.contains("Bad file format") && err.contains("the checksum of the segment there fails"), "{err}");
    }

    /// The same power loss in a log without checksum lines (Redis's, or an older
    /// Basalt's): a hole that breaks a command's RESP, with data after it, ends the log
    /// before that command (a hole inside a value cannot be seen there).
    #[test]
    fn without_checksums_a_hole_that_breaks_a_command_ends_the_log_before_it() {
        let good = cmd(&["SET", "a", "1"]);
        let value = "v".repeat(300);
        let cut = cmd(&["SET", "big", &value]).repeat(4);
        let after = cmd(&["SET", "later", "x"]).repeat(40);
        let image = |fill: u8, hole: std::ops::Range<usize>| {
            let mut f = [good.clone(), cut.clone(), after.clone()].concat();
            f[hole].fill(fill);
            f
        };
        // The block at 512..1024 lies across the second and third SET big: the second's
        // value ends in zeros where its CRLF should be.
        let mut h = harness();
        let (r, len) = replay(&h, &image(0, 512..1024), true);
        r.expect("loaded up to the hole");
        let one = cmd(&["SET", "big", &value]).len();
        assert_eq!(len, (good.len() + (512 - good.len()) / one * one) as u64);
        assert_eq!(h.text("GET a"), "1");
        assert_eq!(h.text("EXISTS later"), "0");
        // Garbage, or zeros that are not a whole aligned block: damage.
        for f in [image(b'x', 512..1024), image(0, 530..1024)] {
            let err = replay(&harness(), &f, true).0.expect_err("damage").to_string();
            assert!(err.contains("Bad file format"), "{err}");
        }
    }

    #[test]
    fn a_value_not_followed_by_crlf_is_damage_when_data_follows() {
        // The two bytes after a value are checked: here they are "xx", and more
        // commands follow, so this is not a torn tail.
        let h = harness();
        let mut f = cmd(&["SET", "a", "1"]);
        f.extend(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\nvxx");
        f.extend(cmd(&["SET", "c", "3"]));
        let err = replay(&h, &f, true).0.expect_err("damage").to_string();
        assert!(err.contains("Bad file format") && err.contains("at offset 27"), "{err}");
        // Data after a hole of zeros inside a command is damage too.
        let mut f = cmd(&["SET", "a", "1"]);
        f.extend(b"*3\r\n$3\r\nSET\r\n");
        f.extend(vec![0u8; 64]);
        f.extend(b"$1\r\nb\r\n");
        let err = replay(&h, &f, true).0.expect_err("damage").to_string();
        assert!(err.contains("Bad file format"), "{err}");
    }

    #[test]
    fn an_annotation_split_across_reads_is_still_an_annotation() {
        // The loader reads 1 MiB at a time: put "#MS:..." across that boundary (a bug
        // the crash test found: the tail of the line was parsed as an inline command).
        let mut h = harness();
        let mut f = Vec::new();
        let filler = cmd(&["SET", "pad", &"x".repeat(1000)]);
        while f.len() + filler.len() < (1 << 20) - 5 {
            f.extend(&filler);
        }
        let pad = (1 << 20) - 5 - f.len();
        f.extend(cmd(&[
            "SET",
            "p2",
            &"y".repeat(pad.saturating_sub(30).max(1)),
        ]));
        for shift in 0..40 {
            let mut g = f.clone();
            let mut tail = cmd(&["SET", "s", &"z".repeat(shift)]);
            tail.extend(b"#MS:1795437765471\r\n");
            tail.extend(cmd(&["SET", "after", "1"]));
            g.extend(tail);
            let (r, _) = replay(&h, &g, true);
            r.unwrap_or_else(|e| panic!("shift {shift}: {e}"));
            assert_eq!(h.text("GET after"), "1");
        }
    }
}
