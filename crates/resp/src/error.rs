//! Protocol errors raised while parsing requests ([`crate::request`]) or decoding replies
//! ([`crate::decode`]).
//!
//! The `Display` text of each request-side variant is exactly what Redis 7.0 writes after
//! `"Protocol error: "`, so the server can reply `-ERR Protocol error: {err}\r\n` and close.

use std::fmt;

/// A malformed or over-limit request or reply.
///
/// Request-side variants (everything up to [`ProtocolError::UnauthenticatedBulkLength`]) mirror
/// Redis 7.0's messages byte for byte. The remaining variants are only produced by the reply
/// decoder, which Redis has no equivalent of.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// An inline request line longer than `Limits::max_inline_len` without a `\n`.
    #[error("too big inline request")]
    TooBigInline,
    /// An inline request with an unterminated quote, or a closing quote not followed by a space.
    #[error("unbalanced quotes in request")]
    UnbalancedQuotes,
    /// A `*<n>` line longer than `Limits::max_inline_len` without a `\r`.
    #[error("too big mbulk count string")]
    TooBigMultibulkCount,
    /// A `*<n>` count that is not a strict decimal integer or exceeds `i32::MAX`.
    #[error("invalid multibulk length")]
    InvalidMultibulkLength,
    /// A bulk header inside a multibulk request that does not start with `$`; carries the byte.
    #[error("expected '$', got '{}'", DollarByte(*.0))]
    ExpectedDollar(u8),
    /// A `$<len>` line longer than `Limits::max_inline_len` without a `\r`.
    #[error("too big bulk count string")]
    TooBigBulkCount,
    /// A `$<len>` that is not a strict decimal integer, is negative, or exceeds the bulk limit.
    #[error("invalid bulk length")]
    InvalidBulkLength,
    /// `*<n>` with `n > 10` on a connection that has not authenticated yet.
    #[error("unauthenticated multibulk length")]
    UnauthenticatedMultibulkLength,
    /// `$<len>` with `len > 16384` on a connection that has not authenticated yet.
    #[error("unauthenticated bulk length")]
    UnauthenticatedBulkLength,
    /// Reply decoder: a first byte that names no RESP2/RESP3 type.
    #[error("unknown reply type byte 0x{0:02x}")]
    UnknownType(u8),
    /// Reply decoder: a structurally invalid reply; the text says what was wrong.
    #[error("invalid reply: {0}")]
    InvalidFrame(&'static str),
    /// Reply decoder: aggregates nested deeper than [`crate::decode::MAX_DEPTH`].
    #[error("reply nested too deeply")]
    NestingTooDeep,
}

/// Displays the offending byte of [`ProtocolError::ExpectedDollar`] the way Redis's reply ends up
/// on the wire: the byte as a character, except that `\r` and `\n` become a space (Redis replaces
/// them so that the error reply stays one line). Bytes >= 0x80 are shown as the Latin-1
/// character of the same value, since a Rust `String` cannot hold the raw byte.
struct DollarByte(u8);

impl fmt::Display for DollarByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = match self.0 {
            b'\r' | b'\n' => ' ',
            b => char::from(b),
        };
        write!(f, "{c}")
    }
}

#[cfg(test)]
mod tests {
    use super::ProtocolError as E;

    #[test]
    fn display_matches_redis_texts() {
        let table: &[(E, &str)] = &[
            (E::TooBigInline, "too big inline request"),
            (E::UnbalancedQuotes, "unbalanced quotes in request"),
            (E::TooBigMultibulkCount, "too big mbulk count string"),
            (E::InvalidMultibulkLength, "invalid multibulk length"),
            (E::ExpectedDollar(b'x'), "expected '$', got 'x'"),
            (E::ExpectedDollar(b'\r'), "expected '$', got ' '"),
            (E::ExpectedDollar(b'\n'), "expected '$', got ' '"),
            (E::TooBigBulkCount, "too big bulk count string"),
            (E::InvalidBulkLength, "invalid bulk length"),
            (
                E::UnauthenticatedMultibulkLength,
                "unauthenticated multibulk length",
            ),
            (E::UnauthenticatedBulkLength, "unauthenticated bulk length"),
            (E::UnknownType(b'?'), "unknown reply type byte 0x3f"),
            (E::InvalidFrame("bad"), "invalid reply: bad"),
            (E::NestingTooDeep, "reply nested too deeply"),
        ];
        for (err, text) in table {
            assert_eq!(err.to_string(), *text, "{err:?}");
        }
    }

    #[test]
    fn server_reply_line_has_no_crlf_inside() {
        for b in 0..=255u8 {
            let line = format!("-ERR Protocol error: {}\r\n", E::ExpectedDollar(b));
            assert_eq!(line.matches("\r\n").count(), 1);
            assert!(!line[..line.len() - 2].contains(['\r', '\n']));
        }
    }
}
