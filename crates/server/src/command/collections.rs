//! Typed access to collection values for the command families: look a key up as a hash,
//! list, set or sorted set (absent -> None, another type -> WRONGTYPE), create it on
//! first write, and remove it when a command empties it (Redis never keeps an empty
//! collection).

use store::entry::{Entry, Payload};
use store::shard::Shard;
use store::types::{hash::Hash, list::List, set::Set, zset::ZSet};
use store::Object;

use super::CommandError;

/// A collection type stored in an [`Object`].
pub trait Collection: Sized + Default {
    fn of(obj: &mut Object) -> Option<&mut Self>;
    fn of_ref(obj: &Object) -> Option<&Self>;
    fn wrap(self) -> Object;
}

macro_rules! collection {
    ($t:ty, $variant:ident) => {
        impl Collection for $t {
            fn of(obj: &mut Object) -> Option<&mut Self> {
                match obj {
                    Object::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn of_ref(obj: &Object) -> Option<&Self> {
                match obj {
                    Object::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn wrap(self) -> Object {
                Object::$variant(self)
            }
        }
    };
}

collection!(Hash, Hash);
collection!(List, List);
collection!(Set, Set);
collection!(ZSet, ZSet);

/// The collection at `key`: Ok(None) when absent, WRONGTYPE when another type.
pub fn get<'s, T: Collection>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    now_ms: i64,
) -> Result<Option<&'s mut T>, CommandError> {
    match shard.get(hash, key, now_ms) {
        None => Ok(None),
        Some(e) => e.object_mut().and_then(T::of).map(Some).ok_or(CommandError::WrongType),
    }
}

/// The collection at `key` for reading: Ok(None) when absent, WRONGTYPE when another
/// type. Unlike [`get`], a running snapshot need not copy it first (`Shard::read`).
pub fn read<'s, T: Collection>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    now_ms: i64,
) -> Result<Option<&'s T>, CommandError> {
    match shard.read(hash, key, now_ms, None) {
        None => Ok(None),
        Some(e) => e.object().and_then(T::of_ref).map(Some).ok_or(CommandError::WrongType),
    }
}

/// The collection at `key`, created empty when absent; WRONGTYPE when another type.
/// The caller must leave it non-empty or call [`drop_if_empty`].
pub fn get_or_create<'s, T: Collection>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    now_ms: i64,
    lru: u32,
) -> Result<&'s mut T, CommandError> {
    if shard.get(hash, key, now_ms).is_none() {
        shard.insert(hash, Entry::new(key, Payload::Object(Box::new(T::default().wrap())), None, lru));
    }
    get::<T>(shard, hash, key, now_ms)?.ok_or(CommandError::NoSuchKey)
}

/// Checks the type of `key` without keeping a borrow: Ok(true) if it holds a T,
/// Ok(false) if absent, WRONGTYPE otherwise.
pub fn check<T: Collection>(shard: &mut Shard, hash: u64, key: &[u8], now_ms: i64) -> Result<bool, CommandError> {
    Ok(get::<T>(shard, hash, key, now_ms)?.is_some())
}

/// Removes `key` if it holds an empty collection.
pub fn drop_if_empty(shard: &mut Shard, hash: u64, key: &[u8], now_ms: i64) {
    let empty = shard
        .get(hash, key, now_ms)
        .and_then(|e| e.object_mut().map(|o| o.is_empty_collection()))
        .unwrap_or(false);
    if empty {
        shard.remove(hash, key, now_ms);
    }
}

/// Stores `value` at `key` (replacing whatever was there), or deletes `key` when the
/// collection is empty (the *STORE commands).
pub fn store<T: Collection>(shard: &mut Shard, hash: u64, key: &[u8], value: T, now_ms: i64, lru: u32) {
    let obj = value.wrap();
    if obj.is_empty_collection() {
        shard.remove(hash, key, now_ms);
    } else {
        shard.insert(hash, Entry::new(key, Payload::Object(Box::new(obj)), None, lru));
    }
}
