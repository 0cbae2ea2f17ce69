//! Typed access to collection values for the command families: look a key up as a hash,
//! list, set, sorted set or stream (absent -> None, another type -> WRONGTYPE), create it on
//! first write, and remove it when a command empties it (Redis never keeps an empty
//! collection).
//!
//! A small collection may live inline in its entry (`store::inline`): then the guards
//! returned here hold it decoded, and [`CollMut`] writes it back when dropped (so a
//! handler drops its guard before it touches the shard again, e.g. [`drop_if_empty`]).

use std::cell::OnceCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use store::entry::{Entry, ObjMut, ObjRef, ObjView, Payload};
use store::events::{class, Flags};
use store::shard::Shard;
use store::types::{hash::Hash, list::List, set::Set, stream::Stream, zset::ZSet};
use store::{Object, ValueRef, ValueType};

use super::{CommandError, Ctx};
use super::keyspace_events::notify;

/// A collection type stored in an [`Object`].
pub trait Collection: Sized + Default {
    const TYPE: ValueType;
    fn of(obj: &mut Object) -> Option<&mut Self>;
    fn of_ref(obj: &Object) -> Option<&Self>;
    fn wrap(self) -> Object;
}

macro_rules! collection {
    ($t:ty, $variant:ident) => {
        impl Collection for $t {
            const TYPE: ValueType = ValueType::$variant;
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

impl Collection for Stream {
    const TYPE: ValueType = ValueType::Stream;
    fn of(obj: &mut Object) -> Option<&mut Self> {
        match obj {
            Object::Stream(x) => Some(x),
            _ => None,
        }
    }
    fn of_ref(obj: &Object) -> Option<&Self> {
        match obj {
            Object::Stream(x) => Some(x),
            _ => None,
        }
    }
    fn wrap(self) -> Object {
        Object::Stream(Box::new(self))
    }
}

/// A collection of type T borrowed for changing (see the module header).
pub struct CollMut<'s, T> {
    obj: ObjMut<'s>,
    _type: PhantomData<T>,
}

impl<T: Collection> Deref for CollMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        T::of_ref(&self.obj).expect("type checked when borrowed")
    }
}

impl<T: Collection> DerefMut for CollMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        T::of(&mut self.obj).expect("type checked when borrowed")
    }
}

/// A collection of type T borrowed for reading. An inline one is decoded on first use
/// of the whole collection; [`CollRef::field`] and [`CollRef::member_score`] read the
/// compact form directly.
pub struct CollRef<'s, T> {
    value: ObjRef<'s>,
    decoded: OnceCell<ObjView<'s>>,
    _type: PhantomData<T>,
}

impl<T: Collection> Deref for CollRef<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        let obj = self.decoded.get_or_init(|| self.value.view());
        T::of_ref(obj).expect("type checked when borrowed")
    }
}

impl CollRef<'_, Hash> {
    /// A field's value (HGET and friends), without decoding an inline hash.
    pub fn field(&self, field: &[u8]) -> Option<&[u8]> {
        match self.value {
            ObjRef::Inline(inline) => inline.value_of(field),
            ObjRef::Boxed(_) => self.get(field),
        }
    }
}

impl CollRef<'_, ZSet> {
    /// A member's score (ZSCORE, ZMSCORE), without decoding an inline sorted set.
    pub fn member_score(&self, member: &[u8]) -> Option<f64> {
        match self.value {
            ObjRef::Inline(inline) => inline.value_of(member).map(store::types::zset::decode_score),
            ObjRef::Boxed(_) => self.score(member),
        }
    }
}

/// The collection at `key`: Ok(None) when absent, WRONGTYPE when another type.
pub fn get<'s, T: Collection>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    now_ms: i64,
) -> Result<Option<CollMut<'s, T>>, CommandError> {
    match shard.get(hash, key, now_ms) {
        Some(e) => coll_mut(e).map(Some),
        None => Ok(None),
    }
}

/// [`get`] as Redis's write lookup: an existing key records the access (LRU/LFU), even
/// one of another type, unless the client asked for NO-TOUCH.
pub fn get_key<'s, T: Collection>(
    ctx: &Ctx<'_>,
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
) -> Result<Option<CollMut<'s, T>>, CommandError> {
    let Some(e) = shard.get(hash, key, ctx.now_ms) else {
        return Ok(None);
    };
    record_access(e, ctx.access());
    coll_mut(e).map(Some)
}

/// Writes `touch` into the entry's access field, whatever the entry's type: Redis's
/// lookup records the access before its caller checks the type.
fn record_access(e: &mut Entry, touch: Option<store::clock::Touch>) {
    match touch {
        None => {}
        Some(store::clock::Touch::Lru(lru)) => e.set_lru(lru),
        Some(lfu) => e.set_lru(lfu.apply(e.lru())),
    }
}

/// An entry as a T, or WRONGTYPE.
fn coll_mut<T: Collection>(e: &mut Entry) -> Result<CollMut<'_, T>, CommandError> {
    // Type check on the entry first, so that a WRONGTYPE decodes nothing.
    if !is_a::<T>(e) {
        return Err(CommandError::WrongType);
    }
    let obj = e.object_mut().ok_or(CommandError::WrongType)?;
    Ok(CollMut {
        obj,
        _type: PhantomData,
    })
}

fn is_a<T: Collection>(e: &Entry) -> bool {
    matches!(e.value(), ValueRef::Obj(o) if o.value_type() == T::TYPE)
}

/// The collection at `key` for reading: Ok(None) when absent, WRONGTYPE when another
/// type. Unlike [`get`], a running snapshot need not copy it first (`Shard::read`).
pub fn read<'s, T: Collection>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    now_ms: i64,
) -> Result<Option<CollRef<'s, T>>, CommandError> {
    read_touched(shard, hash, key, now_ms, None)
}

/// [`read`], recording the access `touch` when given (LRU/LFU).
fn read_touched<'s, T: Collection>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    now_ms: i64,
    touch: Option<store::clock::Touch>,
) -> Result<Option<CollRef<'s, T>>, CommandError> {
    let Some(e) = shard.read(hash, key, now_ms, touch) else {
        return Ok(None);
    };
    match e.value() {
        ValueRef::Obj(value) if value.value_type() == T::TYPE => Ok(Some(CollRef {
            value,
            decoded: OnceCell::new(),
            _type: PhantomData,
        })),
        _ => Err(CommandError::WrongType),
    }
}

/// [`read`] as Redis's read lookup: the read counts as a keyspace hit (the key exists,
/// whatever its type) or a miss (`keymiss` event), see [`Ctx::lookup`].
pub fn read_key<'s, T: Collection>(
    ctx: &Ctx<'_>,
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
) -> Result<Option<CollRef<'s, T>>, CommandError> {
    let found = read_touched::<T>(shard, hash, key, ctx.now_ms, ctx.access());
    ctx.lookup(key, !matches!(found, Ok(None)));
    found
}

/// The collection at `key`, created empty when absent; WRONGTYPE when another type.
/// An existing key's access is recorded (LRU/LFU), as Redis's write lookup does. The
/// caller must leave it non-empty or call [`drop_if_empty`]. (Inlined: on the path of
/// every collection write; LLVM stopped inlining it when the command folder was split.)
#[inline]
pub fn get_or_create<'s, T: Collection>(
    ctx: &Ctx<'_>,
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
) -> Result<CollMut<'s, T>, CommandError> {
    get_or_create_with(shard, hash, key, ctx.now_ms, (ctx.lru(), ctx.access()))
}

/// [`get_or_create`] for a caller without a client: `access` is (a new key's access
/// field, what an existing key's access records, if anything).
#[inline]
pub fn get_or_create_with<'s, T: Collection>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    now_ms: i64,
    (new_access, touch): (u32, Option<store::clock::Touch>),
) -> Result<CollMut<'s, T>, CommandError> {
    let mut created = false;
    let e = shard.get_or_insert_with(hash, key, now_ms, || {
        created = true;
        Entry::new(key, Payload::Object(Box::new(T::default().wrap())), None, new_access)
    });
    if !created {
        record_access(e, touch);
    }
    coll_mut(e)
}

/// Checks the type of `key` without keeping a borrow: Ok(true) if it holds a T,
/// Ok(false) if absent, WRONGTYPE otherwise.
pub fn check<T: Collection>(shard: &mut Shard, hash: u64, key: &[u8], now_ms: i64) -> Result<bool, CommandError> {
    match shard.read(hash, key, now_ms, None) {
        None => Ok(false),
        Some(e) if is_a::<T>(e) => Ok(true),
        Some(_) => Err(CommandError::WrongType),
    }
}

/// Removes `key` if it holds an empty collection; true if it did.
pub fn drop_if_empty(shard: &mut Shard, hash: u64, key: &[u8], now_ms: i64) -> bool {
    let empty = shard
        .get(hash, key, now_ms)
        .is_some_and(|e| e.is_empty_collection());
    if empty {
        shard.remove(hash, key, now_ms);
    }
    empty
}

/// [`drop_if_empty`] after a command emptied the collection: the removal is the
/// keyspace event `del`, as in Redis.
pub fn remove_if_empty(ctx: &Ctx<'_>, shard: &mut Shard, hash: u64, key: &[u8]) {
    if drop_if_empty(shard, hash, key, ctx.now_ms) {
        notify(ctx, class::GENERIC, "del", key);
    }
}

/// What a pop run without a command context reports (a blocked client served, LMOVE's
/// source): its event `(class, name)`, then `del` when it emptied the collection,
/// which is removed; queued, and published with the rest of its command's events.
pub fn queue_pop(events: &Flags, db: usize, shard: &mut Shard, hash: u64, key: &[u8], now_ms: i64, event: (u32, &'static str)) {
    store::events::push(events, event.0, event.1, db, key);
    if drop_if_empty(shard, hash, key, now_ms) {
        store::events::push(events, class::GENERIC, "del", db, key);
    }
}

/// Stores `value` at `key` (replacing whatever was there), or deletes `key` when the
/// collection is empty (the *STORE commands), and queues the keyspace event: `event`
/// (class, name) for a stored value, `del` for a deleted key, as Redis. False when it
/// changed nothing (an empty result, and no key there): the caller tells the
/// dispatcher (`Client::changed_nothing`), as Redis does not count it.
#[must_use]
pub fn store<T: Collection>(ctx: &Ctx<'_>, shard: &mut Shard, hash: u64, key: &[u8], value: T, event: (u32, &'static str)) -> bool {
    let obj = value.wrap();
    if obj.is_empty_collection() {
        let existed = shard.remove(hash, key, ctx.now_ms).is_some();
        if existed {
            notify(ctx, class::GENERIC, "del", key);
        }
        existed
    } else {
        shard.insert(hash, Entry::new(key, Payload::Object(Box::new(obj)), None, ctx.lru()));
        notify(ctx, event.0, event.1, key);
        true
    }
}
