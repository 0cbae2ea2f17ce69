//! The script cache: every script body EVAL ran or SCRIPT LOAD loaded, by the hex SHA-1
//! of its text (EVALSHA's name for it), shared by every event loop. SCRIPT FLUSH empties
//! it and moves its generation on, which tells each loop to start a fresh Lua state.
//!
//! Unbounded, as Redis 7.0's: a client that may run EVAL may fill it (INFO memory shows
//! `number_of_cached_scripts` and `used_memory_scripts_eval`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use sha1::{Digest, Sha1};

/// A script's name: the lower-case hex SHA-1 of its body.
pub type Sha = [u8; 40];

#[derive(Default)]
pub struct ScriptCache {
    bodies: Mutex<HashMap<Sha, Arc<[u8]>>>,
    generation: AtomicU64,
}

/// The lower-case hex SHA-1 of `data` (script names, `redis.sha1hex`).
pub fn sha1_hex(data: &[u8]) -> Sha {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha1::digest(data);
    let mut out = [0u8; 40];
    for (i, b) in digest.iter().enumerate() {
        out[2 * i] = HEX[usize::from(b >> 4)];
        out[2 * i + 1] = HEX[usize::from(b & 15)];
    }
    out
}

/// A client's script name as the cache keys it (EVALSHA takes any case), or None when
/// it cannot name a script (not 40 bytes).
pub fn parse_sha(name: &[u8]) -> Option<Sha> {
    let mut sha: Sha = name.try_into().ok()?;
    sha.make_ascii_lowercase();
    Some(sha)
}

impl ScriptCache {
    /// Keeps `body` under its name `sha` ([`sha1_hex`] of it, which the caller has
    /// already), if not kept already; returns the body kept.
    pub fn insert(&self, sha: Sha, body: &[u8]) -> Arc<[u8]> {
        self.bodies.lock().entry(sha).or_insert_with(|| Arc::from(body)).clone()
    }

    pub fn get(&self, sha: &Sha) -> Option<Arc<[u8]>> {
        self.bodies.lock().get(sha).cloned()
    }

    pub fn contains(&self, sha: &Sha) -> bool {
        self.bodies.lock().contains_key(sha)
    }

    /// SCRIPT FLUSH: forgets every script; each loop's Lua state is made anew before its
    /// next script.
    pub fn flush(&self) {
        let old = std::mem::take(&mut *self.bodies.lock());
        self.generation.fetch_add(1, Ordering::AcqRel);
        drop(old);
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// How many scripts, and the bytes of their bodies (INFO memory).
    pub fn usage(&self) -> (usize, usize) {
        let bodies = self.bodies.lock();
        (bodies.len(), bodies.values().map(|b| b.len() + 40).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_redis_sha1_hex() {
        // Redis 7.0.15: SCRIPT LOAD "return 'loaded'".
        assert_eq!(&sha1_hex(b"return 'loaded'"), b"b534286061d4b9e4026607613b95c06c06015ae8");
        assert_eq!(&sha1_hex(b""), b"da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(parse_sha(b"B534286061D4B9E4026607613B95C06C06015AE8"), Some(*b"b534286061d4b9e4026607613b95c06c06015ae8"));
        assert_eq!(parse_sha(b"fff"), None);
    }

    #[test]
    fn flush_forgets_and_moves_the_generation_on() {
        let cache = ScriptCache::default();
        let sha = sha1_hex(b"return 1");
        cache.insert(sha, b"return 1");
        assert!(cache.contains(&sha));
        let g = cache.generation();
        cache.flush();
        assert!(!cache.contains(&sha));
        assert_eq!(cache.generation(), g + 1);
        assert_eq!(cache.usage(), (0, 0));
    }
}
