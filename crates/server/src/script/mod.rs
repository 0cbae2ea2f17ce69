//! Lua scripting, Redis 7.0's EVAL family: the script cache shared by the event loops
//! (`cache`), each loop's own Lua 5.1 state with Redis's sandbox and `redis` library
//! (`engine`), and the conversions between command replies and Lua values (`convert`).
//!
//! This layer knows nothing of commands or clients: a script's `redis.call` runs its
//! command through a callback that the command layer gives (`command/scripting.rs`,
//! which also makes the run atomic and propagates its effects).

mod bit;
pub mod cache;
mod cjson;
pub mod convert;
pub mod engine;
mod lib_errors;
mod stdlib;
