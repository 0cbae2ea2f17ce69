//! Glob-style pattern matching with Redis semantics.
//!
//! This module owns the single matcher behind every command that takes a glob
//! pattern: KEYS, SCAN/HSCAN/SSCAN/ZSCAN `MATCH`, CONFIG GET, PUBSUB CHANNELS
//! and PSUBSCRIBE message dispatch. It works on bytes (patterns and subjects
//! may hold any byte, NUL included) and never allocates.
//!
//! # Syntax
//!
//! * `*` matches any run of bytes, the empty run included; `?` matches one byte.
//! * `[set]` matches one byte in the set, `[^set]` one byte not in it. Inside a
//!   set, `a-z` is an inclusive range (a reversed range such as `z-a` is
//!   swapped), `\x` is the literal `x`, and any other byte stands for itself.
//!   A `]` right after `[` or `[^` closes an empty set (`[]` never matches,
//!   `[^]` matches any byte).
//! * `\x` outside a set matches the literal `x`; a lone trailing `\` matches a
//!   backslash.
//!
//! # Redis 7.0 quirks reproduced on purpose
//!
//! * An unclosed `[` takes the rest of the pattern as its set: `[abc` matches
//!   one of `a`, `b`, `c`; `a[` and `[` never match; `[^` matches any byte.
//! * A range is parsed before the closing bracket is looked for, so in `[a-]`
//!   the `]` is the end of the range `]`..=`a`, not the end of the set.
//! * Range bounds compare as C `char`, which is signed: bytes `0x80..=0xFF` sort
//!   below `0x00`, so `[a-\xff]` is the range -1..=97 and holds `\xff`,
//!   `\x00` and `A` but not `\x80`, `\x7f` or `b`.
//! * With `nocase` (CONFIG GET), literals and unescaped set members fold ASCII
//!   case. A range's bounds are swapped in signed order first and then folded,
//!   and the folding (glibc `tolower`) also maps bytes `0x80..=0xFE` to
//!   128..=254 while `0xFF` stays -1: so under `nocase` `[a-Z]`, `[\x80-z]`
//!   and `[\x80-\xff]` are empty while `[\xff-z]` holds `\xff` and 0..=`z`.
//!   An escaped byte inside a set (`[\M]`) compares case-sensitively while one
//!   outside a set (`\M`) folds.
//! * An empty subject matches only the empty pattern (`*` does not match `""`).
//!   Redis's KEYS and SCAN treat the exact pattern `*` as "everything" before
//!   they get here, so the empty key is listed by `KEYS *` but not `KEYS **`;
//!   callers that mimic those commands must keep that short cut.
//! * Not done here: Redis's CONFIG GET hands its pattern over as a C string,
//!   so it ignores everything from the first NUL byte; that is the caller's
//!   business. KEYS, SCAN and the pub/sub commands use the full length.
//! * A pattern with more than [`MAX_STAR_NESTING`] `*` runs followed by further
//!   pattern never matches (Redis 7.0.15 caps its matcher's recursion there).
//!
//! # Cost
//!
//! Every token other than `*` consumes exactly one byte, so the text between
//! two stars is a fixed-width segment and placing each segment at its leftmost
//! fit is optimal. The matcher therefore only ever backtracks to the most
//! recent `*`, giving `O(pattern.len() * string.len())` time in the worst case
//! (and linear time for star-free patterns), with no recursion. Its results
//! equal the exhaustive recursive definition; the tests check this.

/// Most `*` runs (each followed by more pattern) a matching pattern may hold.
///
/// Redis 7.0.15 gives up when its recursive matcher nests deeper than this, so
/// a pattern with more such stars matches nothing there, and here.
pub const MAX_STAR_NESTING: usize = 1000;

/// Redis-compatible glob match used by KEYS, SCAN MATCH, CONFIG GET, PUBSUB
/// CHANNELS and PSUBSCRIBE.
///
/// Returns whether `string` matches `pattern` as a whole. `nocase` folds ASCII
/// letters (bytes outside `A-Z`/`a-z` are never folded), as CONFIG GET does;
/// the other commands match case-sensitively. See the module docs for the
/// syntax and the Redis quirks kept.
pub fn glob_match(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    if string.is_empty() {
        return pattern.is_empty();
    }
    // Each counted star run needs at least two pattern bytes, so short
    // patterns cannot exceed the cap and skip the count.
    if pattern.len() > 2 * MAX_STAR_NESTING && inner_star_runs(pattern) > MAX_STAR_NESTING {
        return false;
    }

    let (mut p, mut s) = (0usize, 0usize);
    // Where to resume after the latest `*`: the pattern index just past its
    // run of stars, and the string index at which that star's match ends.
    let mut resume: Option<(usize, usize)> = None;
    loop {
        if p < pattern.len() && pattern[p] == b'*' {
            while p < pattern.len() && pattern[p] == b'*' {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            resume = Some((p, s));
            continue;
        }
        if s == string.len() {
            // `pattern[p]` (if any) is not a star, and every remaining
            // non-star token needs a byte; letting an earlier star absorb more
            // cannot help either.
            return p == pattern.len();
        }
        if p < pattern.len() {
            let (hit, next) = match_token(pattern, p, string[s], nocase);
            if hit {
                p = next;
                s += 1;
                continue;
            }
        }
        // Mismatch, or pattern used up before the string: let the latest star
        // swallow one more byte and retry the segment after it. `s` is below
        // `string.len()` here and the star's end is at most `s`.
        match resume {
            Some((after_star, star_end)) => {
                resume = Some((after_star, star_end + 1));
                p = after_star;
                s = star_end + 1;
            }
            None => return false,
        }
    }
}

/// Matches the single non-star token starting at `pattern[p]` against byte `c`.
///
/// Returns whether it matched and the index of the next token. Where the token
/// ends depends on the pattern alone, never on `c`.
fn match_token(pattern: &[u8], p: usize, c: u8, nocase: bool) -> (bool, usize) {
    match pattern[p] {
        b'?' => (true, p + 1),
        b'\\' if p + 1 < pattern.len() => (bytes_eq(pattern[p + 1], c, nocase), p + 2),
        b'[' => match_set(pattern, p + 1, c, nocase),
        // Includes a lone trailing backslash, which is a literal.
        lit => (bytes_eq(lit, c, nocase), p + 1),
    }
}

/// Matches the body of a `[...]` set starting at `pattern[start]` (just past
/// the `[`); returns whether `c` is accepted and the index past the set.
fn match_set(pattern: &[u8], start: usize, c: u8, nocase: bool) -> (bool, usize) {
    let len = pattern.len();
    let mut i = start;
    let negate = i < len && pattern[i] == b'^';
    if negate {
        i += 1;
    }
    let mut hit = false;
    // Checks are ordered as Redis orders them: escape, close, range, literal.
    while i < len {
        let b = pattern[i];
        if b == b'\\' && len - i >= 2 {
            // Escaped members compare exactly, even under `nocase`.
            hit |= pattern[i + 1] == c;
            i += 2;
        } else if b == b']' {
            return (hit != negate, i + 1);
        } else if len - i >= 3 && pattern[i + 1] == b'-' {
            hit |= in_range(b, pattern[i + 2], c, nocase);
            i += 3;
        } else {
            hit |= bytes_eq(b, c, nocase);
            i += 1;
        }
    }
    // Unclosed: the set ran to the end of the pattern.
    (hit != negate, len)
}

/// Range test as Redis does it on C `char`s (built with glibc): reversed
/// bounds are swapped in signed order. Without `nocase` the test is signed
/// too. With `nocase`, glibc's `tolower` maps the negative values -128..=-2
/// (bytes `0x80..=0xFE`) to 128..=254 but leaves -1 (byte `0xFF`, which is
/// `EOF`) alone, and folds ASCII letters; the test then runs on those values.
fn in_range(lo: u8, hi: u8, c: u8, nocase: bool) -> bool {
    let (lo, hi) = if (lo as i8) <= (hi as i8) {
        (lo, hi)
    } else {
        (hi, lo)
    };
    let key = if nocase { c_tolower } else { c_signed };
    key(lo) <= key(c) && key(c) <= key(hi)
}

/// A byte as a signed C `char`.
fn c_signed(b: u8) -> i32 {
    i32::from(b as i8)
}

/// glibc's `tolower((char)b)` in the C locale (see [`in_range`]).
fn c_tolower(b: u8) -> i32 {
    if b == 0xFF {
        -1
    } else {
        i32::from(b.to_ascii_lowercase())
    }
}

#[inline]
fn bytes_eq(a: u8, b: u8, nocase: bool) -> bool {
    a == b || (nocase && a.eq_ignore_ascii_case(&b))
}

/// Counts the runs of `*` that are followed by more pattern (trailing stars
/// need no recursion in Redis, so they do not count against the cap).
fn inner_star_runs(pattern: &[u8]) -> usize {
    let mut runs = 0;
    let mut i = 0;
    while i < pattern.len() {
        if pattern[i] == b'*' {
            while i < pattern.len() && pattern[i] == b'*' {
                i += 1;
            }
            if i < pattern.len() {
                runs += 1;
            }
        } else {
            i = match_token(pattern, i, 0, false).1;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (pattern, string, expected) for case-sensitive matching (KEYS).
    ///
    /// Checked against Redis 7.0.15: every string was stored as a key on a
    /// scratch redis-server and `KEYS pattern` was compared with `expected`
    /// (rows with an empty string were checked with the exact pattern `*`
    /// excluded, since KEYS short-cuts it; see the module docs).
    const CASES: &[(&[u8], &[u8], bool)] = &[
        // Literals, `?`, `*`.
        (b"hello", b"hello", true),
        (b"hello", b"hell", false),
        (b"hello", b"helloo", false),
        (b"hello", b"Hello", false),
        (b"h?llo", b"hello", true),
        (b"h?llo", b"hllo", false),
        (b"h?llo", b"heello", false),
        (b"???", b"abc", true),
        (b"???", b"ab", false),
        (b"h*llo", b"hllo", true),
        (b"h*llo", b"heeeello", true),
        (b"h*llo", b"hellox", false),
        (b"*", b"a", true),
        (b"*", b"anything at all", true),
        (b"**", b"a", true),
        (b"a*", b"a", true),
        (b"a**", b"a", true),
        (b"*a*", b"a", true),
        (b"*a", b"ba", true),
        (b"*a", b"ab", false),
        (b"a*b", b"ab", true),
        (b"a*b", b"a", false),
        (b"a*b*c", b"axxbyyc", true),
        (b"a*b*c", b"axxcyyb", false),
        (b"*b*b", b"abab", true),
        (b"*?", b"a", true),
        (b"*??", b"a", false),
        (b"user:*:name", b"user:1000:name", true),
        (b"user:*:name", b"user:1000:age", false),
        // Sets, negation, ranges.
        (b"h[ae]llo", b"hello", true),
        (b"h[ae]llo", b"hallo", true),
        (b"h[ae]llo", b"hillo", false),
        (b"h[^e]llo", b"hallo", true),
        (b"h[^e]llo", b"hello", false),
        (b"h[a-b]llo", b"hbllo", true),
        (b"h[a-b]llo", b"hcllo", false),
        (b"[z-a]", b"a", true),
        (b"[z-a]", b"m", true),
        (b"[z-a]", b"z", true),
        (b"[z-a]", b"-", false),
        (b"[z-a]", b"A", false),
        (b"[-a]", b"-", true),
        (b"[-a]", b"a", true),
        (b"[-a]", b"b", false),
        (b"[a-c-e]", b"c", true),
        (b"[a-c-e]", b"-", true),
        (b"[a-c-e]", b"e", true),
        (b"[a-c-e]", b"d", false),
        (b"[*]", b"*", true),
        (b"[*]", b"a", false),
        (b"[?]", b"?", true),
        (b"[?]", b"a", false),
        (b"[[]", b"[", true),
        (b"[^^]", b"^", false),
        (b"[^^]", b"a", true),
        (b"[a^]", b"^", true),
        (b"[a^]", b"a", true),
        (b"[a^]", b"b", false),
        // Empty sets and `]` handling.
        (b"[]", b"]", false),
        (b"[]", b"a", false),
        (b"[^]", b"]", true),
        (b"[^]", b"a", true),
        (b"[]]", b"]", false),
        (b"[]]", b"]]", false),
        // A range swallows the `]` that follows its dash.
        (b"[a-]", b"a", true),
        (b"[a-]", b"]", true),
        (b"[a-]", b"^", true),
        (b"[a-]", b"_", true),
        (b"[a-]", b"`", true),
        (b"[a-]", b"-", false),
        (b"[a-]", b"b", false),
        (b"[a-]b]", b"b", true),
        (b"[a-]b]", b"_", true),
        (b"[a-]b]", b"b]", false),
        // Unclosed sets take the rest of the pattern.
        (b"[abc", b"a", true),
        (b"[abc", b"c", true),
        (b"[abc", b"[", false),
        (b"[abc", b"ab", false),
        (b"[abc", b"d", false),
        (b"a[", b"a", false),
        (b"a[", b"a[", false),
        (b"a[", b"ab", false),
        (b"[", b"[", false),
        (b"[", b"a", false),
        (b"[^", b"a", true),
        (b"[^", b"^", true),
        (b"[^", b"[", true),
        (b"[^", b"ab", false),
        (b"[a-", b"a", true),
        (b"[a-", b"-", true),
        (b"[a-", b"b", false),
        (b"[^a-", b"a", false),
        (b"[^a-", b"-", false),
        (b"[^a-", b"b", true),
        (b"*[", b"a", false),
        (b"*[", b"a[", false),
        (b"*[ab", b"xa", true),
        (b"*[ab", b"xb", true),
        (b"*[ab", b"a", true),
        (b"*[ab", b"x", false),
        // Escapes.
        (b"\\*", b"*", true),
        (b"\\*", b"a", false),
        (b"\\?", b"?", true),
        (b"\\?", b"a", false),
        (b"h\\*llo", b"h*llo", true),
        (b"h\\*llo", b"hello", false),
        (b"[\\]]", b"]", true),
        (b"[\\]]", b"\\", false),
        (b"[\\]]", b"\\]", false),
        (b"[a\\-z]", b"a", true),
        (b"[a\\-z]", b"-", true),
        (b"[a\\-z]", b"z", true),
        (b"[a\\-z]", b"b", false),
        (b"[a\\-z]", b"\\", false),
        (b"[a-\\]", b"a", true),
        (b"[a-\\]", b"\\", true),
        (b"[a-\\]", b"]", true),
        (b"[a-\\]", b"b", false),
        (b"[\\", b"\\", true),
        (b"[\\", b"a", false),
        (b"[^\\", b"\\", false),
        (b"[^\\", b"a", true),
        (b"a\\", b"a\\", true),
        (b"a\\", b"a", false),
        (b"\\", b"\\", true),
        // Binary safety and signed-char range bounds.
        (b"a\x00b", b"a\x00b", true),
        (b"a\x00b", b"a", false),
        (b"[\x00]", b"\x00", true),
        (b"[\x00]", b"a", false),
        (b"[\xff]", b"\xff", true),
        (b"[\xff]", b"a", false),
        (b"[\x80-\xff]", b"\x80", true),
        (b"[\x80-\xff]", b"\xfe", true),
        (b"[\x80-\xff]", b"a", false),
        (b"[a-\xff]", b"a", true),
        (b"[a-\xff]", b"\xff", true),
        (b"[a-\xff]", b"\x00", true),
        (b"[a-\xff]", b"A", true),
        (b"[a-\xff]", b"b", false),
        (b"[a-\xff]", b"\x80", false),
        (b"[a-\xff]", b"\x7f", false),
        (b"[\x01-\x80]", b"\x01", true),
        (b"[\x01-\x80]", b"\x80", true),
        (b"[\x01-\x80]", b"\xff", true),
        (b"[\x01-\x80]", b"a", false),
        // The empty subject matches only the empty pattern.
        (b"", b"", true),
        (b"**", b"", false),
        (b"?", b"", false),
        (b"a*", b"", false),
        (b"[^", b"", false),
        (b"\\", b"", false),
        (b"", b"a", false),
    ];

    /// (pattern, string, expected) with `nocase`, checked against Redis
    /// 7.0.15 through `CONFIG GET pattern` (which matches config names with
    /// case folding).
    const NOCASE_CASES: &[(&[u8], &[u8], bool)] = &[
        (b"?AXMEMORY", b"maxmemory", true),
        (b"*MAXMEM*", b"maxmemory-policy", true),
        (b"maxmemory[-_]POLICY", b"maxmemory-policy", true),
        (b"[M]axmemory", b"maxmemory", true),
        (b"[^M]axmemory", b"maxmemory", false),
        (b"[^m]axmemory", b"maxmemory", false),
        (b"[L-N]axmemory", b"maxmemory", true),
        (b"[l-n]AXMEMORY", b"maxmemory", true),
        (b"[A-z]axmemory", b"maxmemory", true),
        // Swapped, then folded: `Z..a` becomes the empty `z..a`.
        (b"[a-Z]axmemory", b"maxmemory", false),
        (b"[Z-a]axmemory", b"maxmemory", false),
        // An escape inside a set is exact; outside a set it folds.
        (b"[\\M]axmemor?", b"maxmemory", false),
        (b"[\\m]axmemor?", b"maxmemory", true),
        (b"[^\\M]axmemory", b"maxmemory", true),
        (b"\\Maxmemor?", b"maxmemory", true),
        (b"\\maxmemor?", b"maxmemory", true),
        // High-byte range bounds under glibc `tolower` (see `in_range`).
        (b"[\x80-z]axmemory", b"maxmemory", false),
        (b"[^\x80-z]axmemory", b"maxmemory", true),
        (b"[\xff-z]axmemory", b"maxmemory", true),
        (b"[z-\xff]axmemory", b"maxmemory", true),
        (b"[a-\xff]axmemory", b"maxmemory", false),
        (b"[\xff-\x80]axmemory", b"maxmemory", false),
        (b"[^\xff-\x80]axmemory", b"maxmemory", true),
        (b"[\x80-\xff]axmemory", b"maxmemory", false),
        (b"[^\x80-\xff]axmemory", b"maxmemory", true),
    ];

    fn show(b: &[u8]) -> String {
        b.escape_ascii().to_string()
    }

    #[test]
    fn table_case_sensitive() {
        for &(pattern, string, expected) in CASES {
            assert_eq!(
                glob_match(pattern, string, false),
                expected,
                "pattern {:?} string {:?}",
                show(pattern),
                show(string)
            );
        }
    }

    #[test]
    fn table_nocase() {
        for &(pattern, string, expected) in NOCASE_CASES {
            assert_eq!(
                glob_match(pattern, string, true),
                expected,
                "pattern {:?} string {:?}",
                show(pattern),
                show(string)
            );
        }
    }

    #[test]
    fn nocase_folds_ascii_only() {
        assert!(glob_match(b"HeLLo", b"hello", true));
        assert!(!glob_match(b"HeLLo", b"hello", false));
        assert!(glob_match(b"h[A-Z]llo", b"hello", true));
        // 0xC9 / 0xE9 are É / é in Latin-1: never folded.
        assert!(!glob_match(b"\xc9", b"\xe9", true));
        // `@` (0x40) and `` ` `` (0x60) differ by the case bit but are not letters.
        assert!(!glob_match(b"@", b"`", true));
        assert!(!glob_match(b"[@]", b"`", true));
    }

    /// Checked against Redis 7.0.15: `KEYS` with these patterns over a key of
    /// n `a`s matches for n = 1000 and not for n = 1001.
    #[test]
    fn star_nesting_cap() {
        for n in [999usize, 1000] {
            assert!(
                glob_match(&b"*a".repeat(n), &b"a".repeat(n), false),
                "n = {n}"
            );
        }
        for n in [1001usize, 1002, 2000] {
            assert!(
                !glob_match(&b"*a".repeat(n), &b"a".repeat(n), false),
                "n = {n}"
            );
        }
        // Trailing stars do not count, nor do escaped or bracketed ones.
        let mut p = b"a*".repeat(1000);
        p.extend_from_slice(b"***");
        assert!(glob_match(&p, &b"a".repeat(1500), false));
        let p = b"\\*".repeat(1500);
        assert!(glob_match(&p, &b"*".repeat(1500), false));
        let p = b"[*]".repeat(1500);
        assert!(glob_match(&p, &b"*".repeat(1500), false));
    }

    #[test]
    fn pathological_patterns_are_fast() {
        let start = std::time::Instant::now();
        let subject = vec![b'a'; 300];
        let mut pattern = b"a*".repeat(14);
        pattern.push(b'b');
        assert!(!glob_match(&pattern, &subject, false));
        let pattern = b"*a".repeat(150);
        assert!(glob_match(&pattern, &subject, false));
        let mut pattern = b"*a".repeat(150);
        pattern.extend_from_slice(b"*b");
        assert!(!glob_match(&pattern, &subject, false));
        // Many stars and a long subject: still O(pattern * subject).
        let subject = vec![b'a'; 20_000];
        let mut pattern = b"*?".repeat(500);
        pattern.extend_from_slice(b"*[bc]");
        assert!(!glob_match(&pattern, &subject, true));
        let elapsed = start.elapsed();
        // Milliseconds even unoptimised; exponential backtracking would not
        // finish at all.
        assert!(
            elapsed < std::time::Duration::from_secs(2),
            "took {elapsed:?}"
        );
    }

    // ---- Reference implementation for the property test ----
    //
    // Compiles the pattern into tokens, each non-star token into a 256-entry
    // membership table, and matches by exhaustive recursion. Written
    // separately from the matcher above so that the two can disagree.

    enum RefToken {
        Star,
        Byte(Box<[bool; 256]>),
    }

    fn fold(b: u8, nocase: bool) -> u8 {
        if nocase {
            b.to_ascii_lowercase()
        } else {
            b
        }
    }

    fn ref_compile(pattern: &[u8], nocase: bool) -> Vec<RefToken> {
        let mut out = Vec::new();
        let mut rest = pattern;
        while let Some((&first, tail)) = rest.split_first() {
            rest = tail;
            let mut table = Box::new([false; 256]);
            match first {
                b'*' => {
                    out.push(RefToken::Star);
                    continue;
                }
                b'?' => table.fill(true),
                b'[' => {
                    let negate = rest.first() == Some(&b'^');
                    if negate {
                        rest = &rest[1..];
                    }
                    loop {
                        match rest {
                            [b'\\', x, tail @ ..] => {
                                table[*x as usize] = true;
                                rest = tail;
                            }
                            [b']', tail @ ..] => {
                                rest = tail;
                                break;
                            }
                            [lo, b'-', hi, tail @ ..] => {
                                // C semantics: `char` is signed; glibc's
                                // `tolower` returns 128..=254 for -128..=-2
                                // and keeps -1 (EOF).
                                let key = |x: u8| -> i32 {
                                    match (nocase, x) {
                                        (true, 0xFF) => -1,
                                        (true, x) => i32::from(x.to_ascii_lowercase()),
                                        (false, x) => i32::from(x as i8),
                                    }
                                };
                                let (a, b) = (*lo as i8, *hi as i8);
                                let (a, b) = (key(a.min(b) as u8), key(a.max(b) as u8));
                                for c in 0..=255u8 {
                                    if a <= key(c) && key(c) <= b {
                                        table[c as usize] = true;
                                    }
                                }
                                rest = tail;
                            }
                            [x, tail @ ..] => {
                                for c in 0..=255u8 {
                                    if fold(c, nocase) == fold(*x, nocase) {
                                        table[c as usize] = true;
                                    }
                                }
                                rest = tail;
                            }
                            [] => break,
                        }
                    }
                    if negate {
                        for t in table.iter_mut() {
                            *t = !*t;
                        }
                    }
                }
                lit => {
                    let lit = match (lit, rest) {
                        (b'\\', [x, tail @ ..]) => {
                            rest = tail;
                            *x
                        }
                        _ => lit,
                    };
                    for c in 0..=255u8 {
                        table[c as usize] = fold(c, nocase) == fold(lit, nocase);
                    }
                }
            }
            out.push(RefToken::Byte(table));
        }
        out
    }

    fn ref_rec(tokens: &[RefToken], s: &[u8]) -> bool {
        match tokens.split_first() {
            None => s.is_empty(),
            Some((RefToken::Star, rest)) => (0..=s.len()).any(|skip| ref_rec(rest, &s[skip..])),
            Some((RefToken::Byte(table), rest)) => match s.split_first() {
                Some((&c, tail)) => table[c as usize] && ref_rec(rest, tail),
                None => false,
            },
        }
    }

    fn reference(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
        if s.is_empty() {
            return pattern.is_empty();
        }
        ref_rec(&ref_compile(pattern, nocase), s)
    }

    /// xorshift64*: a tiny deterministic PRNG so the test needs no crates.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn bytes(&mut self, alphabet: &[u8], max_len: usize) -> Vec<u8> {
            let len = self.below(max_len + 1);
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len())])
                .collect()
        }
    }

    #[test]
    fn matches_exhaustive_reference() {
        const PATTERN_BYTES: &[u8] = b"ab*?*[]^-\\AZ\xff\x00";
        const STRING_BYTES: &[u8] = b"abAB-]^\\[*?z\xff\x00";
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..40_000 {
            let pattern = rng.bytes(PATTERN_BYTES, 9);
            let string = rng.bytes(STRING_BYTES, 8);
            let nocase = round % 3 == 0;
            assert_eq!(
                glob_match(&pattern, &string, nocase),
                reference(&pattern, &string, nocase),
                "pattern {:?} string {:?} nocase {nocase}",
                show(&pattern),
                show(&string)
            );
        }
    }

    /// Strings built to fit the pattern often, so positive matches get
    /// exercised and not only the easy negatives.
    #[test]
    fn matches_reference_on_likely_matches() {
        let mut rng = Rng(42);
        for _ in 0..20_000 {
            let pattern = rng.bytes(b"ab*?[a-b]\\", 10);
            // Start from the pattern's literal bytes, then perturb.
            let mut string: Vec<u8> = pattern
                .iter()
                .copied()
                .filter(|b| b.is_ascii_lowercase())
                .collect();
            for _ in 0..rng.below(3) {
                let at = rng.below(string.len() + 1);
                string.insert(at, b"ab-"[rng.below(3)]);
            }
            assert_eq!(
                glob_match(&pattern, &string, false),
                reference(&pattern, &string, false),
                "pattern {:?} string {:?}",
                show(&pattern),
                show(&string)
            );
        }
    }
}
