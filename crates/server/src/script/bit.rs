//! Lua BitOp's `bit` library, as Redis 7.0 gives scripts: 32-bit operations on Lua
//! numbers (tobit, tohex, bnot, band, bor, bxor, lshift, rshift, arshift, rol, ror,
//! bswap). Written here because Lua 5.1 has none and the crates that wrap LuaJIT's
//! are not made for an embedded 5.1; the rules are BitOp's: a number is taken modulo
//! 2^32 after rounding to the nearest integer (ties to even), results are signed.

use mlua::{Lua, MultiValue, Table, Value};

use super::lib_errors::{number_arg, plain_function};

/// BitOp's normalisation: the low 32 bits of `x + 2^52 + 2^51` (which rounds `x` to an
/// integer, ties to even, and wraps it), as a signed number.
pub fn tobit(x: f64) -> i32 {
    (x + 6_755_399_441_055_744.0).to_bits() as u32 as i32
}

/// `bit.tohex(x [, n])`: the low `n` hex digits of `x` (default 8; negative: upper case).
pub fn tohex(x: f64, n: Option<f64>) -> String {
    let b = tobit(x) as u32;
    let mut n = n.map_or(8, tobit);
    let upper = n < 0;
    if upper {
        n = n.saturating_neg();
    }
    let n = n.clamp(0, 8) as usize;
    let hex = if upper { format!("{b:08X}") } else { format!("{b:08x}") };
    hex[8 - n..].to_string()
}

type Op = fn(i32, i32) -> i32;

pub fn install(lua: &Lua) -> mlua::Result<()> {
    let bit = lua.create_table()?;
    bit.raw_set("tobit", plain_function(lua, |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        Ok(tobit(number_arg(lua, &args, 1, "tobit")?))
    })?)?;
    bit.raw_set("tohex", plain_function(lua, |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let x = number_arg(lua, &args, 1, "tohex")?;
        let n = if args.len() >= 2 && !matches!(args[1], Value::Nil) { Some(number_arg(lua, &args, 2, "tohex")?) } else { None };
        Ok(tohex(x, n))
    })?)?;
    bit.raw_set("bnot", plain_function(lua, |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        Ok(!tobit(number_arg(lua, &args, 1, "bnot")?))
    })?)?;
    bit.raw_set("bswap", plain_function(lua, |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        Ok(tobit(number_arg(lua, &args, 1, "bswap")?).swap_bytes())
    })?)?;
    fold(lua, &bit, "band", |a, b| a & b)?;
    fold(lua, &bit, "bor", |a, b| a | b)?;
    fold(lua, &bit, "bxor", |a, b| a ^ b)?;
    shift(lua, &bit, "lshift", |x, n| ((x as u32) << (n & 31)) as i32)?;
    shift(lua, &bit, "rshift", |x, n| ((x as u32) >> (n & 31)) as i32)?;
    shift(lua, &bit, "arshift", |x, n| x >> (n & 31))?;
    shift(lua, &bit, "rol", |x, n| (x as u32).rotate_left((n & 31) as u32) as i32)?;
    shift(lua, &bit, "ror", |x, n| (x as u32).rotate_right((n & 31) as u32) as i32)?;
    lua.globals().raw_set("bit", bit)
}

/// band, bor, bxor: one or more numbers folded with `op`.
fn fold(lua: &Lua, bit: &Table, name: &'static str, op: Op) -> mlua::Result<()> {
    bit.raw_set(name, plain_function(lua, move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let mut acc = tobit(number_arg(lua, &args, 1, name)?);
        for i in 2..=args.len() {
            acc = op(acc, tobit(number_arg(lua, &args, i, name)?));
        }
        Ok(acc)
    })?)
}

/// The shifts and rotations: a number and a count.
fn shift(lua: &Lua, bit: &Table, name: &'static str, op: Op) -> mlua::Result<()> {
    bit.raw_set(name, plain_function(lua, move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let x = tobit(number_arg(lua, &args, 1, name)?);
        let n = tobit(number_arg(lua, &args, 2, name)?);
        Ok(op(x, n))
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_become_what_bitop_makes_of_them() {
        // Redis 7.0.15's answers.
        assert_eq!(tobit(2f64.powi(32) + 5.0), 5);
        assert_eq!(tobit(-1.0), -1);
        assert_eq!(tobit(2f64.powi(31)), i32::MIN);
        assert_eq!((tobit(1.5), tobit(2.5), tobit(-2.5)), (2, 2, -2));
        assert_eq!(tobit(2f64.powi(53)), 0);
        assert_eq!(tobit(f64::NAN), 0);
        assert_eq!(tohex(255.0, None), "000000ff");
        assert_eq!(tohex(-1.0, None), "ffffffff");
        assert_eq!(tohex(255.0, Some(2.0)), "ff");
        assert_eq!(tohex(255.0, Some(-4.0)), "00FF");
        assert_eq!(tohex(255.0, Some(0.0)), "");
        assert_eq!(tohex(1.0, Some(10.0)), "00000001");
    }
}
