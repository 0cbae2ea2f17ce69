//! Replication (issue 24), the master's side as far as it is built:
//!
//! - `stream.rs`: the replication stream, its offsets, the backlog and the replicas'
//!   outboxes (plain data, fed by `crate::propagate`).
//! - `master.rs`: full and partial resynchronization, delivery of the stream to the
//!   replicas after each batch of the event loops, the periodic PING, and dropping
//!   replicas that stopped acknowledging or read too slowly.
//!
//! Not built yet: the replica's side (REPLICAOF), WAIT on acknowledgements, disk-less
//! sync (a full sync sends the next save of `dbfilename`, as Redis's disk-based sync),
//! `min-replicas-to-write`, `repl-backlog-ttl`, PSYNC2's second ID after a promotion.

pub mod master;
pub mod stream;
