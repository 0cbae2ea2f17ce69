//! RESP2/RESP3 wire protocol for Basalt.
//!
//! This crate owns everything about bytes on the wire and nothing about commands:
//!
//! * [`request`]: the server-side, resumable request parser ([`RequestParser`]) for multibulk and
//!   inline requests, with Redis 7.0's limits and error texts.
//! * [`decode`]: the client-side reply decoder ([`decode_frame`], [`frame_len`]) for every RESP2 and
//!   RESP3 type, used by tests and the benchmark tool.
//! * [`encode`]: append-only reply writers into a caller's `Vec<u8>`, aware of [`Proto`].
//! * [`frame`]: the owned [`Frame`] tree.
//! * [`double`]: `%.17g` formatting, human-friendly float formatting and Redis's string-to-double
//!   rules.
//! * [`int`]: Redis's strict decimal integer parsing (`string2ll` rules).
//! * [`error`]: [`ProtocolError`], whose `Display` is Redis's text after `"Protocol error: "`.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod decode;
pub mod double;
pub mod encode;
pub mod error;
pub mod frame;
pub mod int;
pub mod request;

pub use decode::{decode_frame, frame_len};
pub use error::ProtocolError;
pub use frame::Frame;
pub use request::{Limits, RequestParser};

/// Which protocol a connection speaks (HELLO 2 / HELLO 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Proto {
    /// RESP2, the default for every new connection.
    #[default]
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}
