//! The `notify-keyspace-events` value: its letters to the event classes of
//! `store::events` and back, as Redis 7.0 reads and writes them (CONFIG SET/GET, the
//! configuration file). Publishing the events is `notify.rs`.

use store::events::class;

/// Flag letters in the order Redis 7.0 writes them back (CONFIG GET): the classes when
/// not all of `A`'s are set, then `K`, `E`, `m`.
const LETTERS: &[(u8, u32)] = &[
    (b'g', class::GENERIC),
    (b'$', class::STRING),
    (b'l', class::LIST),
    (b's', class::SET),
    (b'h', class::HASH),
    (b'z', class::ZSET),
    (b'x', class::EXPIRED),
    (b'e', class::EVICTED),
    (b't', class::STREAM),
    (b'd', class::MODULE),
    (b'n', class::NEW),
];

/// Parses a `notify-keyspace-events` value (any order; `A` for all of
/// `g$lshzxetd`). The error is Redis's CONFIG SET reason.
pub fn parse_flags(value: &str) -> Result<u32, String> {
    let mut flags = 0;
    for c in value.bytes() {
        flags |= match c {
            b'A' => class::ALL,
            b'K' => class::KEYSPACE,
            b'E' => class::KEYEVENT,
            b'm' => class::KEY_MISS,
            other => match LETTERS.iter().find(|(l, _)| *l == other) {
                Some(&(_, bit)) => bit,
                None => return Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into()),
            },
        };
    }
    Ok(flags)
}

/// The flags as Redis 7.0 writes them: `A` when all of its classes are set (and then,
/// as Redis, `n` is not written even when set), otherwise each class letter; then `K`,
/// `E` and `m`.
pub fn format_flags(flags: u32) -> String {
    let mut out = String::new();
    if flags & class::ALL == class::ALL {
        out.push('A');
    } else {
        for &(letter, bit) in LETTERS {
            if flags & bit != 0 {
                out.push(char::from(letter));
            }
        }
    }
    for (letter, bit) in [('K', class::KEYSPACE), ('E', class::KEYEVENT), ('m', class::KEY_MISS)] {
        if flags & bit != 0 {
            out.push(letter);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_and_write_as_redis_does() {
        // Pairs checked against Redis 7.0.15's CONFIG SET / CONFIG GET.
        for (set, shown) in [
            ("KEA", "AKE"),
            ("AKE", "AKE"),
            ("Kx", "xK"),
            ("KEAmn", "AKEm"),
            ("Eg$lshzxetd", "AE"),
            ("gK", "gK"),
            ("", ""),
            ("mn", "nm"),
        ] {
            assert_eq!(format_flags(parse_flags(set).unwrap()), shown, "{set}");
        }
        assert_eq!(parse_flags("KEAmn").unwrap() & class::NEW, class::NEW, "n is set though not shown");
        for bad in ["q", "KEA t", "a"] {
            assert_eq!(parse_flags(bad).unwrap_err(), "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        }
    }
}
