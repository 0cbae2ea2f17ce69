//! The Redis version Basalt answers as (INFO's `redis_version`, HELLO, the RDB's
//! `redis-ver` field): the release whose behaviour is its specification. Clients pick
//! features by it.

pub const REDIS_VERSION: &str = "7.0.15";
