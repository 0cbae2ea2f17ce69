//! ACL users as Redis 7.0 has them: the registry of users (`default` always there), the
//! catalog of commands their rules name (given by the command layer at start, so that
//! this module knows nothing of the dispatcher), password checks, ACL LOG's entries,
//! and the ACL file. The rules of one user are in `user.rs`; the ACL command and the
//! dispatcher's check are above, in `command/acl.rs` and `command/dispatch.rs`.
//!
//! Users are immutable once published: ACL SETUSER builds a changed copy (all its
//! rules or none, as Redis) and replaces the user, and bumps a version that each
//! connection compares with the one it saw (one load per command) before it looks its
//! user up again. A user that may run everything on every key and channel (the
//! default user as shipped) is checked no further.

pub mod user;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

pub use user::{RuleError, User};

/// One command or subcommand as the rules see it; its id is its index in the catalog
/// (the command table's index).
#[derive(Clone, Debug)]
pub struct CatalogEntry {
    /// `get`, or `config|get` for a subcommand.
    pub name: String,
    pub parent: Option<usize>,
    /// Its categories, a bit per [`user::CATEGORIES`] entry.
    pub categories: u32,
}

/// The commands the rules can name.
#[derive(Debug, Default)]
pub struct Catalog {
    entries: Vec<CatalogEntry>,
    subs: Vec<Vec<usize>>,
    /// Top-level ids by name.
    top: Vec<usize>,
    by_name: std::collections::HashMap<String, usize>,
}

impl Catalog {
    pub fn new(entries: Vec<CatalogEntry>) -> Catalog {
        let mut subs = vec![Vec::new(); entries.len()];
        let mut top = Vec::new();
        for (id, e) in entries.iter().enumerate() {
            match e.parent {
                Some(p) => subs[p].push(id),
                None => top.push(id),
            }
        }
        top.sort_by(|&a, &b| entries[a].name.cmp(&entries[b].name));
        for s in &mut subs {
            s.sort_by(|&a, &b| entries[a].name.cmp(&entries[b].name));
        }
        let by_name = entries.iter().enumerate().map(|(id, e)| (e.name.clone(), id)).collect();
        Catalog {
            entries,
            subs,
            top,
            by_name,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A command (`get`) or subcommand (`config|get`) by name, any case.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(&name.to_ascii_lowercase()).copied()
    }

    pub fn name(&self, id: usize) -> &str {
        &self.entries[id].name
    }

    pub fn categories(&self, id: usize) -> u32 {
        self.entries[id].categories
    }

    pub fn subcommands(&self, id: usize) -> &[usize] {
        &self.subs[id]
    }

    /// Top-level commands by name.
    pub fn top_level(&self) -> impl Iterator<Item = usize> + '_ {
        self.top.iter().copied()
    }

    /// Every command and subcommand in a category (ACL CAT category), by name.
    pub fn in_category(&self, bit: u32) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .entries
            .iter()
            .filter(|e| e.categories & bit != 0)
            .map(|e| e.name.as_str())
            .collect();
        names.sort_unstable();
        names
    }
}

static CATALOG: OnceLock<Catalog> = OnceLock::new();

/// Installs the catalog (once, at start; later calls change nothing).
pub fn install_catalog(catalog: Catalog) {
    let _ = CATALOG.set(catalog);
}

/// The catalog (empty until installed: the unit tests of lower modules).
pub fn catalog() -> &'static Catalog {
    static EMPTY: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get().unwrap_or_else(|| EMPTY.get_or_init(Catalog::default))
}

/// Why a command was refused, for ACL LOG (`reason`). Ordered as Redis 7.0 ranks the
/// refusals of several selectors: the most relevant is the greatest (ACL_DENIED_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denied {
    Command,
    Key,
    Auth,
    Channel,
}

impl Denied {
    pub fn reason(self) -> &'static str {
        match self {
            Denied::Command => "command",
            Denied::Key => "key",
            Denied::Channel => "channel",
            Denied::Auth => "auth",
        }
    }
}

/// One ACL LOG entry.
#[derive(Clone, Debug)]
pub struct LogEntry {
    pub count: u64,
    pub reason: Denied,
    /// `toplevel`, `multi` (inside a transaction) or `lua`.
    pub context: &'static str,
    pub object: String,
    pub username: String,
    /// Unix ms of its first and last occurrence.
    pub created_ms: i64,
    pub updated_ms: i64,
    pub client_info: String,
}

/// Entries equal in these within this time are one entry, counted (Redis's
/// ACL_LOG_GROUPING_MAX_TIME_DELTA).
const LOG_GROUPING_MS: i64 = 60_000;

/// The users, their version and the log.
pub struct Acl {
    users: RwLock<BTreeMap<String, Arc<User>>>,
    version: AtomicU64,
    log: Mutex<Vec<LogEntry>>,
}

impl Default for Acl {
    fn default() -> Acl {
        let acl = Acl {
            users: RwLock::new(BTreeMap::new()),
            version: AtomicU64::new(1),
            log: Mutex::new(Vec::new()),
        };
        acl.users.write().insert("default".into(), Arc::new(default_user(None)));
        acl
    }
}

/// The default user as Redis 7.0 starts it: `on nopass ~* &* +@all`, or with the
/// password of `requirepass`.
fn default_user(requirepass: Option<&[u8]>) -> User {
    let c = catalog();
    let mut u = User::new("default", c, false);
    for rule in [&b"on"[..], b"allkeys", b"allchannels", b"allcommands"] {
        let _ = u.apply(rule, c, false);
    }
    match requirepass {
        Some(p) => {
            let _ = u.apply(&[b">", p].concat(), c, false);
        }
        None => {
            let _ = u.apply(b"nopass", c, false);
        }
    }
    u
}

impl Acl {
    /// Bumped on every change: a connection whose version differs looks its user up again.
    #[inline]
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn publish(&self, users: &mut BTreeMap<String, Arc<User>>, user: User) {
        users.insert(user.name.clone(), Arc::new(user));
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    pub fn get(&self, name: &str) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    pub fn default_user(&self) -> Arc<User> {
        self.get("default").unwrap_or_else(|| Arc::new(default_user(None)))
    }

    /// Whether a new connection must authenticate (Redis's authRequired): the default
    /// user has a password or is off.
    pub fn auth_required(&self) -> bool {
        let d = self.default_user();
        !d.nopass || !d.enabled
    }

    /// The user names, sorted (ACL USERS).
    pub fn names(&self) -> Vec<String> {
        self.users.read().keys().cloned().collect()
    }

    pub fn all(&self) -> Vec<Arc<User>> {
        self.users.read().values().cloned().collect()
    }

    /// `requirepass` set or cleared: the default user's passwords follow (Redis:
    /// `resetpass >pass`, or `nopass`).
    pub fn set_requirepass(&self, requirepass: Option<&[u8]>) {
        let mut users = self.users.write();
        let mut u = users
            .get("default")
            .map(|u| (**u).clone())
            .unwrap_or_else(|| default_user(None));
        let c = catalog();
        let _ = u.apply(b"resetpass", c, false);
        match requirepass {
            Some(p) => {
                let _ = u.apply(&[b">", p].concat(), c, false);
            }
            None => {
                let _ = u.apply(b"nopass", c, false);
            }
        }
        self.publish(&mut users, u);
    }

    /// ACL SETUSER: applies every rule to a copy of the user (a new one when absent)
    /// and publishes it, or changes nothing: Err names the rule refused.
    pub fn set_user(
        &self,
        name: &str,
        rules: &[&[u8]],
        all_channels_default: bool,
    ) -> Result<(), (Vec<u8>, RuleError)> {
        let c = catalog();
        let mut users = self.users.write();
        let mut u = match users.get(name) {
            Some(u) => (**u).clone(),
            None => User::new(name, c, all_channels_default),
        };
        for rule in merge_selectors(rules)? {
            u.apply(&rule, c, all_channels_default).map_err(|e| (rule.clone(), e))?;
        }
        self.publish(&mut users, u);
        Ok(())
    }

    /// ACL DELUSER: the users removed (`default` is refused by the caller).
    pub fn delete(&self, names: &[&str]) -> Vec<String> {
        let mut users = self.users.write();
        let gone: Vec<String> = names
            .iter()
            .filter(|n| users.remove(**n).is_some())
            .map(|n| n.to_string())
            .collect();
        if !gone.is_empty() {
            self.version.fetch_add(1, Ordering::AcqRel);
        }
        gone
    }

    /// Replaces every user (ACL LOAD, the ACL file at start): `default` is kept as it
    /// is when the new set lacks it.
    pub fn replace_all(&self, new: Vec<User>) {
        let mut users = self.users.write();
        let default = users.get("default").cloned();
        users.clear();
        for u in new {
            users.insert(u.name.clone(), Arc::new(u));
        }
        if !users.contains_key("default") {
            if let Some(d) = default {
                users.insert("default".into(), d);
            }
        }
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// The user `name` with `password`, when they match and the user is on.
    pub fn authenticate(&self, name: &str, password: &[u8]) -> Option<Arc<User>> {
        let u = self.get(name)?;
        (u.enabled && u.password_ok(password)).then_some(u)
    }

    /// Adds an ACL LOG entry, or counts it into an equal one of the last minute, which
    /// then moves to the front (Redis's order: the most recently seen first).
    pub fn log_denial(&self, entry: LogEntry, max_len: usize) {
        let mut log = self.log.lock();
        let same = log.iter().position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.object == entry.object
                && e.username == entry.username
                && entry.updated_ms - e.updated_ms < LOG_GROUPING_MS
        });
        let entry = match same {
            Some(i) => {
                let mut e = log.remove(i);
                e.count += 1;
                e.updated_ms = entry.updated_ms;
                e.client_info = entry.client_info;
                e
            }
            None => entry,
        };
        log.insert(0, entry);
        log.truncate(max_len);
    }

    /// The newest `n` entries, newest first.
    pub fn log_entries(&self, n: usize) -> Vec<LogEntry> {
        let log = self.log.lock();
        log.iter().take(n).cloned().collect()
    }

    pub fn reset_log(&self) {
        self.log.lock().clear();
    }

    pub fn trim_log(&self, max_len: usize) {
        self.log.lock().truncate(max_len);
    }
}

/// ACL SETUSER's words with each selector made one rule: from a word that opens a
/// parenthesis without closing it to the word that closes it, joined by spaces (Redis's
/// ACLMergeSelectorArguments). An unclosed one: Err with the word that opened it.
pub fn merge_selectors(words: &[&[u8]]) -> Result<Vec<Vec<u8>>, (Vec<u8>, RuleError)> {
    let mut out = Vec::new();
    let mut open: Option<(Vec<u8>, Vec<u8>)> = None; // (opening word, merged so far)
    for w in words {
        if let Some((_, merged)) = open.as_mut() {
            merged.push(b' ');
            merged.extend_from_slice(w);
            if w.last() == Some(&b')') {
                out.push(open.take().map(|(_, m)| m).unwrap_or_default());
            }
        } else if w.first() == Some(&b'(') && w.last() != Some(&b')') {
            open = Some((w.to_vec(), w.to_vec()));
        } else {
            out.push(w.to_vec());
        }
    }
    match open {
        Some((first, _)) => Err((first, RuleError::Unmatched)),
        None => Ok(out),
    }
}

/// Reads an ACL file's users (`user <name> <rules>` per line, blank lines and `#`
/// comments skipped): all of them, or the errors found, each naming file and line.
pub fn parse_file(text: &str, file: &str, all_channels_default: bool) -> Result<Vec<User>, String> {
    let c = catalog();
    let mut users: Vec<User> = Vec::new();
    let mut errors = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_matches(|ch| ch == ' ' || ch == '\t' || ch == '\r');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty()).collect();
        let n = i + 1;
        if words.len() < 2 || words[0] != "user" {
            errors.push_str(&format!(
                "{file}:{n} should start with user keyword followed by the username. "
            ));
            continue;
        }
        if users.iter().any(|u| u.name == words[1]) {
            errors.push_str(&format!("WARNING: Duplicate user '{}' found on line {n}. ", words[1]));
            continue;
        }
        let mut u = User::new(words[1], c, all_channels_default);
        let rules: Vec<&[u8]> = words[2..].iter().map(|w| w.as_bytes()).collect();
        match merge_selectors(&rules) {
            Ok(rules) => {
                for rule in rules {
                    if let Err(e) = u.apply(&rule, c, all_channels_default) {
                        errors.push_str(&format!("{file}:{n}: {}. ", user::rule_error_text(e)));
                        break;
                    }
                }
            }
            Err(_) => errors.push_str(&format!("{file}:{n}: Unmatched parenthesis in selector definition.")),
        }
        users.push(u);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        Err(format!(
            "{errors}WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
        ))
    }
}

/// An ACL file's text for the users (ACL SAVE): one ACL LIST line each.
pub fn file_text(acl: &Acl) -> String {
    let c = catalog();
    acl.all().iter().map(|u| u.describe(c) + "\n").collect()
}
