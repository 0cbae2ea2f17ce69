//! Argument parsing shared by every command family: integers, floats, keywords and
//! expiry options, each failing with Redis's error text.

use store::types::string::{parse_f64, parse_i64};

use super::CommandError;

/// An integer argument ("ERR value is not an integer or out of range" otherwise).
pub fn int(arg: &[u8]) -> Result<i64, CommandError> {
    parse_i64(arg).ok_or(CommandError::NotInteger)
}

/// A non-negative integer argument that must fit usize.
pub fn uint(arg: &[u8]) -> Result<usize, CommandError> {
    let n = int(arg)?;
    usize::try_from(n).map_err(|_| CommandError::NotInteger)
}

/// A float argument ("ERR value is not a valid float" otherwise).
pub fn float(arg: &[u8]) -> Result<f64, CommandError> {
    parse_f64(arg).ok_or(CommandError::NotFloat)
}

/// Case-insensitive keyword comparison.
#[inline]
pub fn is(arg: &[u8], keyword: &str) -> bool {
    arg.eq_ignore_ascii_case(keyword.as_bytes())
}

/// A database index argument checked against the configured count.
pub fn db_index(arg: &[u8], databases: usize) -> Result<usize, CommandError> {
    let n = parse_i64(arg).ok_or(CommandError::NotInteger)?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n < databases)
        .ok_or(CommandError::msg("ERR DB index is out of range"))
}

/// LEFT or RIGHT (LMOVE, LMPOP and their blocking forms).
pub fn list_end(w: &[u8]) -> Result<store::types::list::End, CommandError> {
    if is(w, "left") {
        Ok(store::types::list::End::Head)
    } else if is(w, "right") {
        Ok(store::types::list::End::Tail)
    } else {
        Err(CommandError::Syntax)
    }
}

/// A pop count (LPOP, SPOP, ZPOPMIN ...): "ERR value is out of range, must be positive"
/// for anything but a non-negative integer.
pub fn pop_count(arg: &[u8]) -> Result<usize, CommandError> {
    const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
    let n = int(arg).map_err(|_| CommandError::msg(NOT_POSITIVE))?;
    usize::try_from(n).map_err(|_| CommandError::msg(NOT_POSITIVE))
}

/// The optional `COUNT n` tail of LMPOP/ZMPOP and their blocking forms (default 1).
pub fn mpop_count(rest: &[&[u8]]) -> Result<usize, CommandError> {
    match rest {
        [] => Ok(1),
        [c, n] if is(c, "count") => {
            const NOT_POSITIVE: &str = "ERR count should be greater than 0";
            let n = int(n).map_err(|_| CommandError::msg(NOT_POSITIVE))?;
            usize::try_from(n).ok().filter(|&n| n > 0).ok_or(CommandError::msg(NOT_POSITIVE))
        }
        _ => Err(CommandError::Syntax),
    }
}

/// The optional `LIMIT n` of SINTERCARD/ZINTERCARD from a[i..] (0 = no limit).
pub fn intercard_limit(a: &[&[u8]], mut i: usize) -> Result<usize, CommandError> {
    let mut limit = 0usize;
    while i < a.len() {
        if is(a[i], "limit") && i + 1 < a.len() {
            const NEGATIVE: &str = "ERR LIMIT can't be negative";
            let l = int(a[i + 1]).map_err(|_| CommandError::msg(NEGATIVE))?;
            limit = usize::try_from(l).map_err(|_| CommandError::msg(NEGATIVE))?;
            i += 2;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    Ok(limit)
}

/// How an expiry option gave its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpireUnit {
    /// EX / EXPIRE: relative seconds.
    RelSeconds,
    /// PX / PEXPIRE: relative milliseconds.
    RelMillis,
    /// EXAT / EXPIREAT: absolute Unix seconds.
    AbsSeconds,
    /// PXAT / PEXPIREAT: absolute Unix milliseconds.
    AbsMillis,
}

impl ExpireUnit {
    /// The unit named by a SET/GETEX option word, if it is one.
    pub fn from_option(word: &[u8]) -> Option<ExpireUnit> {
        if is(word, "ex") {
            Some(ExpireUnit::RelSeconds)
        } else if is(word, "px") {
            Some(ExpireUnit::RelMillis)
        } else if is(word, "exat") {
            Some(ExpireUnit::AbsSeconds)
        } else if is(word, "pxat") {
            Some(ExpireUnit::AbsMillis)
        } else {
            None
        }
    }
}

/// Converts an expiry argument of SET / GETEX (which must be positive) to absolute Unix
/// milliseconds, with Redis's errors: not an integer, or "invalid expire time" for a
/// value <= 0 or one that overflows.
pub fn positive_expire_at_ms(
    arg: &[u8],
    unit: ExpireUnit,
    now_ms: i64,
    command: &'static str,
) -> Result<i64, CommandError> {
    let n = int(arg)?;
    if n <= 0 {
        return Err(CommandError::InvalidExpire(command));
    }
    expire_at_ms(n, unit, now_ms).ok_or(CommandError::InvalidExpire(command))
}

/// Absolute Unix ms for a (possibly negative) expiry value; None on overflow.
pub fn expire_at_ms(n: i64, unit: ExpireUnit, now_ms: i64) -> Option<i64> {
    match unit {
        ExpireUnit::RelSeconds => n.checked_mul(1000)?.checked_add(now_ms),
        ExpireUnit::RelMillis => n.checked_add(now_ms),
        ExpireUnit::AbsSeconds => n.checked_mul(1000),
        ExpireUnit::AbsMillis => Some(n),
    }
}

/// The options SET and GETEX share, parsed with Redis's conflict rules: a flag may
/// repeat (the last expiry given wins), but NX/XX, and any two different expiry forms
/// (EX, PX, EXAT, PXAT, KEEPTTL, PERSIST), conflict.
#[derive(Default)]
pub struct StringOptions<'a> {
    pub nx: bool,
    pub xx: bool,
    pub get: bool,
    pub keep_ttl: bool,
    pub persist: bool,
    pub expire: Option<(ExpireUnit, &'a [u8])>,
}

/// Which option words a command accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OptionSet {
    /// SET: NX XX GET KEEPTTL EX PX EXAT PXAT.
    Set,
    /// GETEX: PERSIST EX PX EXAT PXAT.
    GetEx,
}

/// Parses SET/GETEX options from `words`; Err(Syntax) on an unknown word, a missing
/// value, or a conflict.
pub fn string_options<'a>(words: &[&'a [u8]], set: OptionSet) -> Result<StringOptions<'a>, CommandError> {
    let mut o = StringOptions::default();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let other_expiry = |o: &StringOptions<'_>, unit: Option<ExpireUnit>| {
            o.keep_ttl || o.persist || o.expire.is_some_and(|(u, _)| Some(u) != unit)
        };
        if set == OptionSet::Set && is(w, "nx") && !o.xx {
            o.nx = true;
        } else if set == OptionSet::Set && is(w, "xx") && !o.nx {
            o.xx = true;
        } else if set == OptionSet::Set && is(w, "get") {
            o.get = true;
        } else if set == OptionSet::Set && is(w, "keepttl") && !other_expiry(&o, None) {
            o.keep_ttl = true;
        } else if set == OptionSet::GetEx && is(w, "persist") && o.expire.is_none() {
            o.persist = true;
        } else if let Some(unit) = ExpireUnit::from_option(w) {
            let Some(v) = words.get(i + 1) else { return Err(CommandError::Syntax) };
            if other_expiry(&o, Some(unit)) {
                return Err(CommandError::Syntax);
            }
            o.expire = Some((unit, v));
            i += 1;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expire_conversions_and_errors() {
        assert_eq!(positive_expire_at_ms(b"10", ExpireUnit::RelSeconds, 5, "set").ok(), Some(10_005));
        assert_eq!(positive_expire_at_ms(b"7", ExpireUnit::AbsMillis, 5, "set").ok(), Some(7));
        assert!(matches!(
            positive_expire_at_ms(b"0", ExpireUnit::RelSeconds, 5, "set"),
            Err(CommandError::InvalidExpire("set"))
        ));
        assert!(matches!(
            positive_expire_at_ms(b"9223372036854775807", ExpireUnit::RelSeconds, 5, "set"),
            Err(CommandError::InvalidExpire("set"))
        ));
        assert!(matches!(
            positive_expire_at_ms(b"x", ExpireUnit::RelSeconds, 5, "set"),
            Err(CommandError::NotInteger)
        ));
    }
}
