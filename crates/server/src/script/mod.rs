//! Lua scripting, Redis 7.0's EVAL family and functions: the script cache shared by the
//! event loops (`cache`), the function libraries (`functions`), each loop's own Lua 5.1
//! state with Redis's sandbox and `redis` library, where scripts run and libraries are
//! loaded (`engine`), and the conversions between command replies and Lua values
//! (`convert`).
//!
//! This layer knows nothing of commands or clients: a script's `redis.call` runs its
//! command through a callback that the command layer gives (`command/scripting.rs`,
//! which also makes the run atomic and propagates its effects).

mod bit;
pub mod cache;
mod cjson;
mod cmsgpack;
pub mod convert;
pub mod engine;
pub mod functions;
mod lib_errors;
pub mod shebang;
mod stdlib;
mod structlib;
