//! Replication (issue 24), both sides:
//!
//! - `stream.rs`: the replication stream, its offsets, the backlog and the replicas'
//!   outboxes (plain data, fed by `crate::propagate`).
//! - `master.rs`: full and partial resynchronization, delivery of the stream to the
//!   replicas after each batch of the event loops, the periodic PING, and dropping
//!   replicas that stopped acknowledging or read too slowly.
//!
//! - `role.rs`: the replica role's state (the link, as INFO and ROLE read it).
//! - `replica.rs`: REPLICAOF's link to a master (handshake, full or partial sync, the
//!   stream applied through the dispatcher and logged, acknowledgements), over
//!   `link_stream.rs`'s connection (plain TCP, or TLS with `tls-replication yes`).
//!
//! A full sync's snapshot is made by `snapshot.rs`: sent to the replicas as it is
//! written (disk-less, the default) or as the next save of `dbfilename`.
//!
//! - `failover.rs`: FAILOVER, a master handing its role to a replica (writes held until
//!   it has the whole stream, then `PSYNC ... FAILOVER`).

pub mod backlog;
pub mod failover;
pub mod link_stream;
pub mod master;
pub mod replica;
pub mod role;
pub mod stream;
