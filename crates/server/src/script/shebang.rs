//! A script's shebang line (`#!lua flags=no-writes,allow-oom`), as Redis 7.0 reads it:
//! the engine and the flags a script declares (`functions::flag`, the same as a
//! function's). Read when a script runs, and by CLIENT PAUSE WRITE, which lets a
//! script that declares `no-writes` run (Redis's getCommandFlags for EVAL).

use super::functions::flag;

/// The flags a script's shebang declares: None without a shebang (the compatibility
/// mode of scripts before 7.0), or Redis's error text.
pub fn flags(body: &[u8]) -> Result<Option<u8>, String> {
    if !body.starts_with(b"#!") {
        return Ok(None);
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid script shebang".to_string());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let mut parts = line.split_ascii_whitespace();
    let engine = parts.next().unwrap_or("");
    if engine != "#!lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {engine}"));
    }
    let mut flags = 0u8;
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {part}"));
        };
        // (`flags=` alone names none; an empty name between commas is refused.)
        for name in list.split(',').filter(|_| !list.is_empty()) {
            let Some((bit, _)) = flag::NAMES.iter().find(|(_, n)| *n == name) else {
                return Err(format!("ERR Unexpected flag in script shebang: {name}"));
            };
            flags |= bit;
        }
    }
    Ok(Some(flags))
}

/// Whether a script declares `no-writes` (a shebang that cannot be read declares nothing).
pub fn declares_no_writes(body: &[u8]) -> bool {
    flags(body).ok().flatten().is_some_and(|f| f & flag::NO_WRITES != 0)
}
