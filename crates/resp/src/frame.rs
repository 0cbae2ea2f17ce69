//! The owned RESP2/RESP3 value tree ([`Frame`]) produced by [`crate::decode::decode_frame`] and
//! written by [`crate::encode::frame`].

use bytes::Bytes;

/// One RESP2 or RESP3 value.
///
/// Decoding maps the wire types onto these variants as follows: `+` Simple, `-` and the RESP3 blob
/// error `!` Error, `:` Integer, `$` Bulk, `$-1`/`*-1`/`_` Null, `*` Array, `%` Map, `~` Set,
/// `>` Push, `,` Double, `#` Boolean, `(` BigNumber, `=` Verbatim, `|` Attribute.
///
/// Attributes: a top-level `|` attribute is returned by the decoder as its own
/// [`Frame::Attribute`] (the reply it annotates is the next frame in the stream). An attribute
/// nested inside an aggregate is validated and then dropped, and does not count as an element.
/// The encoder mirrors this: inside an Array, Set or Push an `Attribute` element is written as a
/// prefix of the element after it and is not counted in the aggregate's length.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// `+text`: must not contain `\r` or `\n`.
    Simple(Bytes),
    /// `-CODE message` (or `!len` blob error when it contains `\r` or `\n`).
    Error(Bytes),
    /// `:n`.
    Integer(i64),
    /// `$len` binary-safe string.
    Bulk(Bytes),
    /// RESP2 `$-1` / `*-1`, RESP3 `_`.
    Null,
    /// `*n` (RESP2 and RESP3).
    Array(Vec<Frame>),
    /// RESP3 `%n` map of key/value pairs, in wire order.
    Map(Vec<(Frame, Frame)>),
    /// RESP3 `~n` set, in wire order.
    Set(Vec<Frame>),
    /// RESP3 `>n` out-of-band push.
    Push(Vec<Frame>),
    /// RESP3 `,` double.
    Double(f64),
    /// RESP3 `#t` / `#f`.
    Boolean(bool),
    /// RESP3 `(` big number: the decimal digits, with an optional leading `-`.
    BigNumber(Bytes),
    /// RESP3 `=len\r\nfmt:text`: a three-byte format such as `txt` or `mkd`, and the text.
    Verbatim {
        /// The three-byte format, e.g. `*b"txt"`.
        format: [u8; 3],
        /// The text after `fmt:`.
        text: Bytes,
    },
    /// RESP3 `|n` attribute map (see the type-level note on where attributes may appear).
    Attribute(Vec<(Frame, Frame)>),
}

impl Frame {
    /// A [`Frame::Simple`] from anything convertible to [`Bytes`] (e.g. `&'static str`).
    pub fn simple(s: impl Into<Bytes>) -> Self {
        Frame::Simple(s.into())
    }

    /// A [`Frame::Error`] from anything convertible to [`Bytes`]; include the code (`"ERR ..."`).
    pub fn error(s: impl Into<Bytes>) -> Self {
        Frame::Error(s.into())
    }

    /// A [`Frame::Bulk`] from anything convertible to [`Bytes`].
    pub fn bulk(b: impl Into<Bytes>) -> Self {
        Frame::Bulk(b.into())
    }

    /// True for [`Frame::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Frame::Null)
    }

    /// The payload of a Simple, Bulk, Error, BigNumber or Verbatim frame; `None` for others.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Frame::Simple(b)
            | Frame::Error(b)
            | Frame::Bulk(b)
            | Frame::BigNumber(b)
            | Frame::Verbatim { text: b, .. } => Some(b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Frame;

    #[test]
    fn constructors_and_accessors() {
        assert_eq!(Frame::simple("OK"), Frame::Simple("OK".into()));
        assert_eq!(Frame::bulk(&b"v"[..]).as_bytes(), Some(&b"v"[..]));
        assert_eq!(Frame::error("ERR x").as_bytes(), Some(&b"ERR x"[..]));
        assert!(Frame::Null.is_null());
        assert!(!Frame::Integer(0).is_null());
        assert_eq!(Frame::Integer(1).as_bytes(), None);
        let v = Frame::Verbatim {
            format: *b"txt",
            text: "hi".into(),
        };
        assert_eq!(v.as_bytes(), Some(&b"hi"[..]));
    }
}
