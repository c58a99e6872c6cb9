//! Conversions between command replies and Lua values, as Redis 7.0 makes them.
//!
//! Reply → Lua (what `redis.call` returns): integers are numbers, bulk strings strings,
//! status replies `{ok=...}`, nulls `false` (RESP2) or `nil` (RESP3), arrays tables; after
//! `redis.setresp(3)` maps are `{map={...}}`, sets `{set={k=true}}`, doubles `{double=n}` and
//! booleans booleans. A RESP2 script sees the RESP2 form of RESP3-only replies.
//!
//! Lua → reply (what a script returns): numbers truncate to integers, `true` is 1 (a RESP3
//! boolean after `setresp(3)`), `false`/`nil` null, a table with a string `err` field an
//! error, with `ok` a status, otherwise an array of its elements 1, 2, ... up to the first nil.

use mlua::{Lua, Table, Value};

use crate::resp::format_f64;
use crate::resp::reply::Reply;

/// How deep a returned table may nest before Redis's "reached lua stack limit" stops it (a
/// table may contain itself).
const MAX_DEPTH: usize = 200;

/// A Lua number as a double.
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// C's `(long long)` of a double on x86-64: out-of-range and NaN give i64::MIN.
fn truncate(n: f64) -> i64 {
    // 2^63: the first double outside i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// A reply as the Lua value `redis.call` returns (errors are handled by the caller).
pub fn reply_to_lua(lua: &Lua, reply: &Reply, resp3: bool) -> mlua::Result<Value> {
    Ok(match reply {
        Reply::Status(s) => {
            let t = lua.create_table()?;
            t.raw_set("ok", lua.create_string(s.as_bytes())?)?;
            Value::Table(t)
        }
        Reply::Error(e) => {
            let t = lua.create_table()?;
            t.raw_set("err", lua.create_string(e.as_bytes())?)?;
            Value::Table(t)
        }
        Reply::Int(i) => Value::Number(*i as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Verbatim(s) if resp3 => {
            let inner = lua.create_table()?;
            inner.raw_set("format", "txt")?;
            inner.raw_set("string", lua.create_string(s.as_bytes())?)?;
            single(lua, "verbatim_string", Value::Table(inner))?
        }
        Reply::Verbatim(s) => Value::String(lua.create_string(s.as_bytes())?),
        Reply::Nil | Reply::NilArray if resp3 => Value::Nil,
        Reply::Nil | Reply::NilArray => Value::Boolean(false),
        Reply::Double(d) if resp3 => single(lua, "double", Value::Number(*d))?,
        Reply::Double(d) => Value::String(lua.create_string(format_f64(*d))?),
        Reply::HumanDouble(text) if resp3 => {
            single(lua, "double", Value::Number(text.parse().unwrap_or(0.0)))?
        }
        Reply::HumanDouble(text) => Value::String(lua.create_string(text)?),
        Reply::Bool(b) if resp3 => Value::Boolean(*b),
        Reply::Bool(b) => Value::Number(f64::from(u8::from(*b))),
        Reply::Array(items) | Reply::Push(items) => array(lua, items.iter(), resp3)?,
        Reply::Set(items) if resp3 => {
            let set = lua.create_table()?;
            for item in items {
                set.raw_set(reply_to_lua(lua, item, resp3)?, true)?;
            }
            single(lua, "set", Value::Table(set))?
        }
        Reply::Set(items) => array(lua, items.iter(), resp3)?,
        Reply::Map(pairs) if resp3 => {
            let map = lua.create_table()?;
            for (k, v) in pairs {
                map.raw_set(reply_to_lua(lua, k, resp3)?, reply_to_lua(lua, v, resp3)?)?;
            }
            single(lua, "map", Value::Table(map))?
        }
        Reply::Map(pairs) => array(lua, pairs.iter().flat_map(|(k, v)| [k, v]), resp3)?,
    })
}

fn single(lua: &Lua, field: &str, value: Value) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(field, value)?;
    Ok(Value::Table(t))
}

fn array<'r>(
    lua: &Lua,
    items: impl Iterator<Item = &'r Reply>,
    resp3: bool,
) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    for (i, item) in items.enumerate() {
        // A table key of nil would fail; a RESP3 null element leaves a hole, as in Redis.
        let v = reply_to_lua(lua, item, resp3)?;
        t.raw_set(i + 1, v)?;
    }
    Ok(Value::Table(t))
}

/// A script's return value as the reply its caller gets.
pub fn lua_to_reply(v: &Value, resp3: bool) -> Reply {
    convert(v, resp3, 0)
}

fn convert(v: &Value, resp3: bool, depth: usize) -> Reply {
    if depth > MAX_DEPTH {
        return Reply::err("ERR reached lua stack limit");
    }
    match v {
        Value::String(s) => Reply::Bulk(s.as_bytes().to_vec()),
        Value::Boolean(b) if resp3 => Reply::Bool(*b),
        Value::Boolean(true) => Reply::Int(1),
        Value::Integer(i) => Reply::Int(*i),
        Value::Number(n) => Reply::Int(truncate(*n)),
        Value::Table(t) => table(t, resp3, depth),
        _ => Reply::Nil,
    }
}

fn no_newlines(s: &[u8]) -> String {
    String::from_utf8_lossy(s).replace(['\r', '\n'], " ")
}

fn table(t: &Table, resp3: bool, depth: usize) -> Reply {
    if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
        return Reply::Error(no_newlines(&e.as_bytes()).into());
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
        return Reply::Status(no_newlines(&s.as_bytes()).into());
    }
    if let Some(d) = t.raw_get::<Value>("double").ok().as_ref().and_then(number) {
        return Reply::Double(d);
    }
    if let Ok(Value::Table(v)) = t.raw_get::<Value>("verbatim_string") {
        if let (Ok(Value::String(_)), Ok(Value::String(s))) =
            (v.raw_get::<Value>("format"), v.raw_get::<Value>("string"))
        {
            return Reply::Verbatim(String::from_utf8_lossy(&s.as_bytes()).into_owned());
        }
    }
    if let Ok(Value::Table(m)) = t.raw_get::<Value>("map") {
        let pairs = m
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, v)| (convert(&k, resp3, depth + 1), convert(&v, resp3, depth + 1)))
            .collect();
        return Reply::Map(pairs);
    }
    if let Ok(Value::Table(s)) = t.raw_get::<Value>("set") {
        let items = s
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, _)| convert(&k, resp3, depth + 1))
            .collect();
        return Reply::Set(items);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(convert(&v, resp3, depth + 1)),
        }
    }
    Reply::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_truncate_like_c() {
        assert_eq!(truncate(3.99), 3);
        assert_eq!(truncate(-3.99), -3);
        assert_eq!(truncate(f64::NAN), i64::MIN);
        assert_eq!(truncate(1e30), i64::MIN);
    }
}
