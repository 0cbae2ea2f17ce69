//! basalt-server: a Redis-compatible server. The binary (`main.rs`) only parses the
//! command line; everything else lives here so that tests can run commands in process.
//!
//! Where to look: `startup.rs` (start-up and shutdown), `net/` (event loops),
//! `conn.rs` (request cycle of one connection), `command/` (the command table, families
//! and dispatcher), `propagate.rs` (what reaches the log), `aof/` and `snapshot.rs`
//! (persistence), `shared.rs` and `state/` (state shared by the loops), `config.rs`,
//! `info.rs`, `expire.rs` (active expiry), `log.rs`. The layers they form are in
//! docs/architecture.md.

pub mod acl;
pub mod allocator;
pub mod aof;
pub mod apply;
pub mod command;
pub mod config;
pub mod conn;
pub mod counters;
pub mod digest;
pub mod evict;
pub mod expire;
pub mod fsutil;
pub mod info;
pub mod latency;
pub mod latency_monitor;
pub mod lazyfree;
pub mod log;
pub mod net;
pub mod notify;
pub mod notify_flags;
pub mod output;
pub mod order;
pub mod output_limit;
pub mod propagate;
pub mod publish;
pub mod replication;
pub mod script;
pub mod shared;
pub mod shutdown;
pub mod snapshot;
pub mod startup;
pub mod state;
pub mod supervise;
pub mod tls;
pub mod tracking;
pub mod version;
pub mod waker;
pub mod walk;

/// Basalt's own version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
