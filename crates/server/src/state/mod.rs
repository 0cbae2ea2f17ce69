//! The state the event loops share, one file per subsystem, that `shared.rs` composes.
//! Plain data with the methods that need nothing else: what acts on it across
//! subsystems (and so takes the whole `Shared`) lives in the subsystem's own module
//! above (`snapshot.rs`, `tracking.rs`, `evict.rs` ...). Keeping the state below
//! `Shared` is what keeps the crate's modules out of one import circle.

pub mod clients;
pub mod failover;
pub mod loading;
pub mod loops;
pub mod memory;
pub mod migrate_sockets;
pub mod pause;
pub mod shutdown;
pub mod snapshots;
pub mod tracking;
pub mod waiters;
