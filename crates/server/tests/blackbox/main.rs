//! Black-box tests for basalt-server, speaking RESP over TCP.
//!
//! Run against Basalt (default), another binary (`BASALT_TEST_SERVER`) or
//! a running server (`BASALT_TEST_ADDR`); see `harness.rs`.

mod harness;

mod connection;
mod expiry;
mod keys;
mod protocol;
mod resp3;
mod server_cmds;
mod strings;
mod wrongtype;
