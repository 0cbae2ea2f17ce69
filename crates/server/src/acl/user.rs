//! One ACL user as Redis 7.0 keeps it: its flags, password hashes, the commands it may
//! run (a bit per command of the catalog), the key and channel patterns it may touch;
//! the rules of ACL SETUSER that change it, and the text ACL LIST gives back.
//!
//! Redis 7.0's rules, checked against 7.0.15 (tests/py/test_acl.py runs against both):
//! - A new user is `off`, has no password, no key, no channel (`acl-pubsub-default
//!   resetchannels`) and no command.
//! - Commands: `+cmd` / `-cmd` set the command's bit and its subcommands'; `+cmd|sub`
//!   the subcommand's alone; `+@cat` / `-@cat` every command and subcommand in the
//!   category; `+@all` (`allcommands`) sets every bit and also allows commands added
//!   later, which the description shows as a leading `+@all`; `-@all` (`nocommands`)
//!   clears them. Redis 7.0 describes a user's commands from its bits (as its
//!   ACLDescribeSelectorCommandRules): from `+@all` or `-@all`, the category that fits
//!   best, again and again while one covers more than it undoes, then the commands that
//!   still differ, one by one. Redis walks its command dictionary in hash order for
//!   that last part (the order changes from run to run); Basalt walks its commands by
//!   name. Basalt counts a category over the commands it has, so where it lacks some of
//!   Redis's the choice of categories can differ.
//! - Keys: `~pat` (read and write), `%R~pat`, `%W~pat`, `%RW~pat`; `~*` or `allkeys`
//!   is every key, after which a pattern is an error until `resetkeys`. A key is
//!   allowed when a pattern with the permissions its access needs matches it (read for
//!   a key spec's `access`, write for `insert`, `delete` and `update`).
//! - Channels: `&pat`, `&*` or `allchannels`, `resetchannels`; a pattern subscription
//!   (PSUBSCRIBE) must equal one of the user's patterns literally.
//! - Selectors: `(rules)` adds a selector, a set of command, key and channel rules of
//!   its own (one SETUSER word, or several joined from the one that opens the
//!   parenthesis to the one that closes it); `clearselectors` removes them. A command
//!   runs when the user's root rules or any selector allow it whole; when none does,
//!   the refusal named is the most relevant one (channel, then key, then command; the
//!   later argument on a tie), as Redis's.
//! - Not built: first-argument rules (`+select|0`), refused with an error naming them.

use sha2::{Digest, Sha256};

use super::Catalog;

/// Redis 7.0's ACL categories, in its table's order (ACL CAT, the description's pass).
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// A category's bit in a command's category mask.
pub fn category_bit(name: &str) -> Option<u32> {
    CATEGORIES
        .iter()
        .position(|c| c.eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

/// Read permission of a key pattern.
pub const KEY_READ: u8 = 1;
/// Write permission of a key pattern.
pub const KEY_WRITE: u8 = 2;

/// A key pattern with the permissions it grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPattern {
    pub perms: u8,
    pub pattern: Vec<u8>,
}

/// One user. Immutable once published (`super::Acl` replaces it whole on a change).
#[derive(Clone, Debug)]
pub struct User {
    pub name: String,
    pub enabled: bool,
    pub nopass: bool,
    /// `Some(true)` after `sanitize-payload` (or `reset`), `Some(false)` after
    /// `skip-sanitize-payload`: shown by ACL LIST, not otherwise used (Basalt's RESTORE
    /// always checks a payload whole).
    pub sanitize_payload: Option<bool>,
    /// SHA-256 of each password, lower-case hex, in the order added.
    pub passwords: Vec<String>,
    /// The user's own command, key and channel rules.
    pub root: Selector,
    /// Further sets of rules (`(...)`), any of which may allow a command.
    pub selectors: Vec<Selector>,
}

/// One set of command, key and channel rules.
#[derive(Clone, Debug)]
pub struct Selector {
    /// A bit per command id of the catalog.
    allowed: Vec<u64>,
    /// Set by `+@all`: commands added later (beyond the bits) are allowed too, and the
    /// description leads with `+@all`.
    future_commands: bool,
    pub all_keys: bool,
    pub keys: Vec<KeyPattern>,
    pub all_channels: bool,
    pub channels: Vec<Vec<u8>>,
}

/// Why a rule was refused: Redis 7.0's texts (ACLSetUserStringError).
pub fn rule_error_text(kind: RuleError) -> &'static str {
    match kind {
        RuleError::Unknown => "Unknown command or category name in ACL",
        RuleError::Syntax => "Syntax error",
        RuleError::KeysAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
        RuleError::ChannelsAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
        RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
        RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
        RuleError::Unmatched => "Unmatched parenthesis in acl selector",
        RuleError::FirstArgs => "first-argument rules (command|argument for a command without subcommands) are not supported by this server",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleError {
    Unknown,
    Syntax,
    KeysAfterAll,
    ChannelsAfterAll,
    NoSuchPassword,
    BadHash,
    Unmatched,
    FirstArgs,
}

/// SHA-256 of a password in lower-case hex, as ACL GETUSER shows it.
pub fn hash_password(password: &[u8]) -> String {
    let digest = Sha256::digest(password);
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

fn is_hash(s: &[u8]) -> bool {
    s.len() == 64 && s.iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

impl User {
    /// A user as ACL SETUSER creates it: off, nothing allowed.
    pub fn new(name: &str, catalog: &Catalog, all_channels_default: bool) -> User {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            sanitize_payload: None,
            passwords: Vec::new(),
            root: Selector::new(catalog, all_channels_default),
            selectors: Vec::new(),
        }
    }

    /// The root rules, then each selector.
    pub fn all_selectors(&self) -> impl Iterator<Item = &Selector> {
        std::iter::once(&self.root).chain(self.selectors.iter())
    }
}

impl Selector {
    /// No command, key or channel (but every channel with `acl-pubsub-default
    /// allchannels`).
    pub fn new(catalog: &Catalog, all_channels_default: bool) -> Selector {
        Selector {
            allowed: vec![0; catalog.len().div_ceil(64)],
            future_commands: false,
            all_keys: false,
            keys: Vec::new(),
            all_channels: all_channels_default,
            channels: Vec::new(),
        }
    }

    /// Whether command `id` may run (an id beyond the bits: a command added after the
    /// rules were made, allowed after `+@all`).
    #[inline]
    pub fn may_run(&self, id: usize) -> bool {
        match self.allowed.get(id / 64) {
            Some(w) => w & (1 << (id % 64)) != 0,
            None => self.future_commands,
        }
    }

    /// Whether every command of the catalog may run.
    pub fn runs_everything(&self, catalog: &Catalog) -> bool {
        (0..catalog.len()).all(|id| self.may_run(id))
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if id / 64 >= self.allowed.len() {
            let fill = if self.future_commands { u64::MAX } else { 0 };
            self.allowed.resize(id / 64 + 1, fill);
        }
        if let Some(w) = self.allowed.get_mut(id / 64) {
            if on {
                *w |= 1 << (id % 64);
            } else {
                *w &= !(1 << (id % 64));
            }
        }
    }

    /// A command and its subcommands (Redis's ACLChangeSelectorPerm).
    fn set_command(&mut self, catalog: &Catalog, id: usize, on: bool) {
        self.set_bit(id, on);
        for &sub in catalog.subcommands(id) {
            self.set_bit(sub, on);
        }
    }

    fn set_category(&mut self, catalog: &Catalog, bit: u32, on: bool) {
        for id in catalog.top_level() {
            if catalog.categories(id) & bit != 0 {
                self.set_command(catalog, id, on);
            }
            for &sub in catalog.subcommands(id) {
                if catalog.categories(sub) & bit != 0 {
                    self.set_bit(sub, on);
                }
            }
        }
    }

    fn set_all(&mut self, on: bool) {
        let word = if on { u64::MAX } else { 0 };
        self.allowed.iter_mut().for_each(|w| *w = word);
        self.future_commands = on;
    }

    /// Applies one rule of a selector (keys, channels, commands).
    pub fn apply(&mut self, rule: &[u8], catalog: &Catalog) -> Result<(), RuleError> {
        let lower = rule.to_ascii_lowercase();
        match &lower[..] {
            b"allkeys" => return self.apply(b"~*", catalog),
            b"resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            b"allchannels" => return self.apply(b"&*", catalog),
            b"resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            b"allcommands" | b"+@all" => self.set_all(true),
            b"nocommands" | b"-@all" => self.set_all(false),
            _ => return self.apply_operand(rule, catalog),
        }
        Ok(())
    }

    fn apply_operand(&mut self, rule: &[u8], catalog: &Catalog) -> Result<(), RuleError> {
        match rule.first() {
            Some(b'~') | Some(b'%') => self.add_key_pattern(rule)?,
            Some(b'&') => {
                if self.all_channels {
                    return Err(RuleError::ChannelsAfterAll);
                }
                let pattern = &rule[1..];
                if pattern == b"*" {
                    self.all_channels = true;
                    self.channels.clear();
                } else if !self.channels.iter().any(|c| c == pattern) {
                    self.channels.push(pattern.to_vec());
                }
            }
            Some(&sign @ (b'+' | b'-')) => {
                let on = sign == b'+';
                let name = std::str::from_utf8(&rule[1..]).map_err(|_| RuleError::Unknown)?;
                if let Some(cat) = name.strip_prefix('@') {
                    let bit = category_bit(cat).ok_or(RuleError::Unknown)?;
                    self.set_category(catalog, bit, on);
                } else if let Some(id) = catalog.find(name) {
                    self.set_command(catalog, id, on);
                } else if let Some((parent, _)) = name.split_once('|') {
                    // A known command without that subcommand: a first-argument rule
                    // when it has no subcommands at all (Redis 7.0 takes those).
                    return match catalog.find(parent) {
                        Some(p) if catalog.subcommands(p).is_empty() && on => Err(RuleError::FirstArgs),
                        _ => Err(RuleError::Unknown),
                    };
                } else {
                    return Err(RuleError::Unknown);
                }
            }
            _ => return Err(RuleError::Syntax),
        }
        Ok(())
    }

    fn add_key_pattern(&mut self, rule: &[u8]) -> Result<(), RuleError> {
        let (perms, pattern) = if rule[0] == b'~' {
            (KEY_READ | KEY_WRITE, &rule[1..])
        } else {
            let tilde = rule.iter().position(|&c| c == b'~').ok_or(RuleError::Syntax)?;
            let mut perms = 0;
            for &c in &rule[1..tilde] {
                perms |= match c.to_ascii_uppercase() {
                    b'R' => KEY_READ,
                    b'W' => KEY_WRITE,
                    _ => return Err(RuleError::Syntax),
                };
            }
            if perms == 0 {
                return Err(RuleError::Syntax);
            }
            (perms, &rule[tilde + 1..])
        };
        if self.all_keys {
            return Err(RuleError::KeysAfterAll);
        }
        if pattern == b"*" && perms == KEY_READ | KEY_WRITE {
            self.all_keys = true;
            self.keys.clear();
        } else if let Some(p) = self.keys.iter_mut().find(|p| p.pattern == pattern) {
            p.perms |= perms;
        } else {
            self.keys.push(KeyPattern {
                perms,
                pattern: pattern.to_vec(),
            });
        }
        Ok(())
    }

    /// Whether `key` may be touched with `perms` (KEY_READ / KEY_WRITE).
    pub fn key_allowed(&self, key: &[u8], perms: u8) -> bool {
        self.all_keys
            || self
                .keys
                .iter()
                .any(|p| p.perms & perms == perms && store::glob::glob_match(&p.pattern, key, false))
    }

    /// Whether `channel` may be used; a pattern subscription must equal a pattern.
    pub fn channel_allowed(&self, channel: &[u8], is_pattern: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if is_pattern {
                    p == channel
                } else {
                    store::glob::glob_match(p, channel, false)
                }
            })
    }

    /// The key patterns as ACL GETUSER's `keys` (`~*` for every key).
    pub fn describe_keys(&self) -> String {
        if self.all_keys {
            return "~*".into();
        }
        let words: Vec<String> = self
            .keys
            .iter()
            .map(|p| {
                let prefix = match p.perms {
                    KEY_READ => "%R~",
                    KEY_WRITE => "%W~",
                    _ => "~",
                };
                format!("{prefix}{}", String::from_utf8_lossy(&p.pattern))
            })
            .collect();
        words.join(" ")
    }

    /// The channel patterns as ACL GETUSER's `channels` (`&*` for every channel).
    pub fn describe_channels(&self) -> String {
        if self.all_channels {
            return "&*".into();
        }
        let words: Vec<String> = self
            .channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect();
        words.join(" ")
    }

    /// The commands as Redis 7.0 describes them (see the module's notes): from `+@all`
    /// or `-@all`, the category that fits best (fewest commands to undo, then most
    /// covered) while one covers more than it undoes, each counted over the commands
    /// no category chosen yet covers; then each command (and subcommand) that still
    /// differs, by name.
    pub fn describe_commands(&self, catalog: &Catalog) -> String {
        let additive = !self.future_commands;
        let mut rules = String::from(if additive { "-@all " } else { "+@all " });
        let mut fake = Selector::new(catalog, false);
        fake.set_all(!additive);
        // The user's bits with the chosen categories taken out.
        let mut rest = self.clone();
        let mut applied = vec![false; CATEGORIES.len()];
        loop {
            let mut best: Option<(usize, usize, usize)> = None; // (category, diff, same)
            for (i, done) in applied.iter().enumerate() {
                if *done {
                    continue;
                }
                let bit = 1u32 << i;
                let (mut on, mut off) = (0usize, 0usize);
                for id in (0..catalog.len()).filter(|&id| catalog.categories(id) & bit != 0) {
                    if rest.may_run(id) {
                        on += 1;
                    } else {
                        off += 1;
                    }
                }
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                let better = match best {
                    None => true,
                    Some((_, d, s)) => diff < d || (diff == d && same > s),
                };
                if same > diff && better {
                    best = Some((i, diff, same));
                }
            }
            let Some((i, _, _)) = best else { break };
            let bit = 1u32 << i;
            fake.set_category(catalog, bit, additive);
            rest.set_category(catalog, bit, !additive);
            rules.push_str(if additive { "+@" } else { "-@" });
            rules.push_str(CATEGORIES[i]);
            rules.push(' ');
            applied[i] = true;
        }
        for id in catalog.top_level() {
            let mine = self.may_run(id);
            if mine != fake.may_run(id) {
                rules.push(if mine { '+' } else { '-' });
                rules.push_str(catalog.name(id));
                rules.push(' ');
                fake.set_command(catalog, id, mine);
            }
            for &sub in catalog.subcommands(id) {
                let mine = self.may_run(sub);
                if mine != fake.may_run(sub) {
                    rules.push(if mine { '+' } else { '-' });
                    rules.push_str(catalog.name(sub));
                    rules.push(' ');
                    fake.set_bit(sub, mine);
                }
            }
        }
        rules.pop();
        rules
    }

    /// Keys, channels and commands as ACL LIST gives them.
    pub fn describe(&self, catalog: &Catalog) -> String {
        let mut words: Vec<String> = Vec::new();
        let keys = self.describe_keys();
        if !keys.is_empty() {
            words.push(keys);
        }
        if !self.all_channels {
            words.push("resetchannels".into());
        }
        let channels = self.describe_channels();
        if !channels.is_empty() {
            words.push(channels);
        }
        words.push(self.describe_commands(catalog));
        words.join(" ")
    }
}

impl User {
    /// Applies one ACL SETUSER rule (a selector `(...)` is one rule).
    pub fn apply(&mut self, rule: &[u8], catalog: &Catalog, all_channels_default: bool) -> Result<(), RuleError> {
        let lower = rule.to_ascii_lowercase();
        match &lower[..] {
            b"on" => self.enabled = true,
            b"off" => self.enabled = false,
            b"nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            b"resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            b"skip-sanitize-payload" => self.sanitize_payload = Some(false),
            b"sanitize-payload" => self.sanitize_payload = Some(true),
            b"clearselectors" => self.selectors.clear(),
            b"reset" => {
                for r in [&b"resetpass"[..], b"resetkeys", b"resetchannels", b"clearselectors"] {
                    self.apply(r, catalog, all_channels_default)?;
                }
                if all_channels_default {
                    self.root.all_channels = true;
                }
                self.enabled = false;
                self.sanitize_payload = Some(true);
                self.root.set_all(false);
            }
            _ => match rule.first() {
                Some(b'>') => {
                    let h = hash_password(&rule[1..]);
                    if !self.passwords.contains(&h) {
                        self.passwords.push(h);
                    }
                    self.nopass = false;
                }
                Some(b'#') => {
                    if !is_hash(&rule[1..]) {
                        return Err(RuleError::BadHash);
                    }
                    let h = String::from_utf8_lossy(&rule[1..]).into_owned();
                    if !self.passwords.contains(&h) {
                        self.passwords.push(h);
                    }
                    self.nopass = false;
                }
                Some(b'<') => {
                    let h = hash_password(&rule[1..]);
                    let before = self.passwords.len();
                    self.passwords.retain(|p| *p != h);
                    if self.passwords.len() == before {
                        return Err(RuleError::NoSuchPassword);
                    }
                }
                Some(b'!') => {
                    if !is_hash(&rule[1..]) {
                        return Err(RuleError::BadHash);
                    }
                    let before = self.passwords.len();
                    self.passwords.retain(|p| p.as_bytes() != &rule[1..]);
                    if self.passwords.len() == before {
                        return Err(RuleError::NoSuchPassword);
                    }
                }
                Some(b'(') if rule.last() == Some(&b')') => {
                    let mut sel = Selector::new(catalog, all_channels_default);
                    for word in rule[1..rule.len() - 1].split(|&c| c == b' ').filter(|w| !w.is_empty()) {
                        sel.apply(word, catalog)?;
                    }
                    self.selectors.push(sel);
                }
                Some(b'(') => return Err(RuleError::Unmatched),
                _ => return self.root.apply(rule, catalog),
            },
        }
        Ok(())
    }

    /// Whether `password` logs in as this user (any, with `nopass`).
    pub fn password_ok(&self, password: &[u8]) -> bool {
        if self.nopass {
            return true;
        }
        let h = hash_password(password);
        self.passwords.iter().fold(false, |ok, p| ok | constant_time_eq(p.as_bytes(), h.as_bytes()))
    }

    /// Flags in ACL GETUSER's and ACL LIST's order.
    pub fn flag_words(&self) -> Vec<&'static str> {
        let mut f = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            f.push("nopass");
        }
        match self.sanitize_payload {
            Some(false) => f.push("skip-sanitize-payload"),
            Some(true) => f.push("sanitize-payload"),
            None => {}
        }
        f
    }

    /// The user as one ACL LIST line (and as an ACL file's line).
    pub fn describe(&self, catalog: &Catalog) -> String {
        let mut words: Vec<String> = vec!["user".into(), self.name.clone()];
        words.extend(self.flag_words().into_iter().map(String::from));
        words.extend(self.passwords.iter().map(|p| format!("#{p}")));
        words.push(self.root.describe(catalog));
        for s in &self.selectors {
            words.push(format!("({})", s.describe(catalog)));
        }
        words.join(" ")
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::CatalogEntry;

    /// get (read, string, fast), set (write, string, slow), config (slow) with
    /// config|get (admin, slow, dangerous) and config|set (admin, slow, dangerous).
    fn catalog() -> Catalog {
        let bit = |names: &[&str]| names.iter().map(|n| category_bit(n).unwrap()).fold(0, |a, b| a | b);
        Catalog::new(vec![
            CatalogEntry {
                name: "get".into(),
                parent: None,
                categories: bit(&["read", "string", "fast"]),
            },
            CatalogEntry {
                name: "set".into(),
                parent: None,
                categories: bit(&["write", "string", "slow"]),
            },
            CatalogEntry {
                name: "config".into(),
                parent: None,
                categories: bit(&["slow"]),
            },
            CatalogEntry {
                name: "config|get".into(),
                parent: Some(2),
                categories: bit(&["admin", "slow", "dangerous"]),
            },
            CatalogEntry {
                name: "config|set".into(),
                parent: Some(2),
                categories: bit(&["admin", "slow", "dangerous"]),
            },
        ])
    }

    fn user(rules: &[&str]) -> (User, Catalog) {
        let c = catalog();
        let mut u = User::new("u", &c, false);
        for r in rules {
            u.apply(r.as_bytes(), &c, false).unwrap();
        }
        (u, c)
    }

    #[test]
    fn a_new_user_is_off_and_may_do_nothing() {
        let (u, c) = user(&[]);
        assert_eq!(u.describe(&c), "user u off resetchannels -@all");
        assert!(!u.root.may_run(0));
    }

    #[test]
    fn commands_and_subcommands() {
        let (u, c) = user(&["+config|get"]);
        assert!(u.root.may_run(3) && !u.root.may_run(4) && !u.root.may_run(2));
        assert_eq!(u.root.describe_commands(&c), "-@all +config|get");
        // (In this small catalog admin is config's two subcommands alone: chosen first.)
        let (u, c) = user(&["+config|get", "+config"]);
        assert_eq!(u.root.describe_commands(&c), "-@all +@admin +config");
        let (u, c) = user(&["+@all", "-config|get"]);
        assert_eq!(u.root.describe_commands(&c), "+@all -config|get");
        // (write is set alone here, so the category describes it.)
        let (u, c) = user(&["+get", "+set", "-get"]);
        assert_eq!(u.root.describe_commands(&c), "-@all +@write");
    }

    #[test]
    fn categories_are_described_greedily() {
        // string: 1 allowed of 2, not more: not added; read (get alone) is.
        let (u, c) = user(&["+@string", "-set"]);
        assert_eq!(u.root.describe_commands(&c), "-@all +@read");
        // admin and dangerous cover the same two: one is enough (ties go to the first).
        let (u, c) = user(&["+@dangerous"]);
        assert_eq!(u.root.describe_commands(&c), "-@all +@admin");
        let (u, c) = user(&["+@all", "-@dangerous"]);
        assert_eq!(u.root.describe_commands(&c), "+@all -@admin");
        // The best fit first: string undoes one (set) for one (get); read undoes none.
        let (u, c) = user(&["+get"]);
        assert_eq!(u.root.describe_commands(&c), "-@all +@read");
    }

    #[test]
    fn keys_and_channels() {
        let (u, _) = user(&["%R~r:*", "%W~w:*", "~x", "%R~x"]);
        assert_eq!(u.root.describe_keys(), "%R~r:* %W~w:* ~x");
        assert!(u.root.key_allowed(b"r:1", KEY_READ) && !u.root.key_allowed(b"r:1", KEY_WRITE));
        assert!(u.root.key_allowed(b"x", KEY_READ | KEY_WRITE));
        let c = catalog();
        let mut u = User::new("u", &c, false);
        u.apply(b"allkeys", &c, false).unwrap();
        assert_eq!(u.apply(b"~a", &c, false), Err(RuleError::KeysAfterAll));
        u.apply(b"&news.*", &c, false).unwrap();
        assert!(u.root.channel_allowed(b"news.1", false));
        assert!(!u.root.channel_allowed(b"news.1", true) && u.root.channel_allowed(b"news.*", true));
    }

    #[test]
    fn passwords() {
        let (mut u, c) = user(&[">p1", ">p2", "<p1"]);
        assert!(u.password_ok(b"p2") && !u.password_ok(b"p1"));
        assert_eq!(u.apply(b"<p1", &c, false), Err(RuleError::NoSuchPassword));
        assert_eq!(u.apply(b"#abc", &c, false), Err(RuleError::BadHash));
        assert_eq!(
            hash_password(b"p1"),
            "f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a",
            "as Redis 7.0.15's ACL GETUSER shows it"
        );
    }
}
