//! Replication (issue 24), the master's side as far as it is built:
//!
//! - `stream.rs`: the replication stream, its offsets, the backlog and the replicas'
//!   outboxes (plain data, fed by `crate::propagate`).
//! - `master.rs`: full and partial resynchronization, delivery of the stream to the
//!   replicas after each batch of the event loops, the periodic PING, and dropping
//!   replicas that stopped acknowledging or read too slowly.
//!
//! - `role.rs`: the replica role's state (the link, as INFO and ROLE read it).
//! - `replica.rs`: REPLICAOF's link to a master (handshake, full or partial sync, the
//!   stream applied through the dispatcher, acknowledgements).
//!
//! A full sync's snapshot is made by `snapshot.rs`: sent to the replicas as it is
//! written (disk-less, the default) or as the next save of `dbfilename`.
//!
//! - `failover.rs`: FAILOVER, a master handing its role to a replica (writes held until
//!   it has the whole stream, then `PSYNC ... FAILOVER`).
//!
//! Not built yet: a replica's own log of the stream (it is rewritten after each sync
//! and at a promotion instead).

pub mod backlog;
pub mod failover;
pub mod master;
pub mod replica;
pub mod role;
pub mod stream;
