//! Keyspace (stub; being written).
