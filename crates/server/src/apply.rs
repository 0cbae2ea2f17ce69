//! The interface through which persistence (and, with issue 24, replication) hands
//! commands to the dispatcher without importing it: the log's replay calls an
//! [`Apply`] that its caller, above the dispatcher, gives it
//! (`command::replay::Replayer`). So `aof` never calls up into `command`.

/// Runs commands that come from a log or a stream, not from a connection: they are not
/// propagated again, and nothing waits for their replies.
pub trait Apply {
    /// Whether `name` names a command (a replay refuses a file with others).
    fn knows(&self, name: &[u8]) -> bool;
    /// Runs one command as of `now_ms` (the time it first ran).
    fn apply(&mut self, args: &[&[u8]], now_ms: i64);
    /// Drops a transaction left open (MULTI without EXEC) where the source ended.
    fn drop_transaction(&mut self);
}
