//! The libraries Redis gives scripts beside its own: `bit` (LuaBitOp), `cjson` and `cmsgpack`,
//! written here in Rust (Lua 5.1 has no bit operations, and these are small enough to own).
//! They follow the originals for what scripts use: the operations' results, JSON's escaping
//! and number format (`%.14g`), MessagePack's smallest encodings.
//!
//! Each native function returns `(true, results...)` or `(false, message)`; the prelude wraps
//! it so the message is raised as a plain Lua error, as the C libraries raise theirs.

use std::sync::{Arc, Mutex, PoisonError};

use mlua::{LightUserData, Lua, MultiValue, Table, Value, Variadic};

use super::convert::number;

/// Tables nested deeper than this are packed as nil, as lua-cmsgpack does.
const MSGPACK_MAX_NESTING: usize = 16;

type Outcome = mlua::Result<MultiValue>;
/// A named 32-bit operation of `bit`.
type Unary = (&'static str, fn(i32) -> i32);
/// A named operation on two 32-bit values (fold or shift).
type Binary<B> = (&'static str, fn(i32, B) -> i32);

fn ok(lua: &Lua, values: impl IntoIterator<Item = Value>) -> Outcome {
    let _ = lua;
    let mut out = MultiValue::new();
    out.push_back(Value::Boolean(true));
    out.extend(values);
    Ok(out)
}

fn fail(lua: &Lua, msg: impl AsRef<[u8]>) -> Outcome {
    let mut out = MultiValue::new();
    out.push_back(Value::Boolean(false));
    out.push_back(Value::String(lua.create_string(msg)?));
    Ok(out)
}

/// The native tables: `bit`, `cjson`, `cmsgpack`, in one table keyed by name.
pub fn natives(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("bit", bit(lua)?)?;
    t.raw_set("cjson", cjson(lua)?)?;
    t.raw_set("cmsgpack", cmsgpack(lua)?)?;
    Ok(t)
}

// ---- bit ----

/// LuaBitOp's conversion to a 32-bit integer: round to nearest (ties to even) through
/// 2^52 + 2^51, keep the low 32 bits.
fn tobit(n: f64) -> i32 {
    (n + 6_755_399_441_055_744.0).to_bits() as u32 as i32
}

fn bit_arg(lua: &Lua, args: &[Value], i: usize, name: &str) -> Result<i32, Outcome> {
    match args.get(i).and_then(number) {
        Some(n) => Ok(tobit(n)),
        None => {
            let got = args.get(i).map_or("no value", Value::type_name);
            Err(fail(
                lua,
                format!(
                    "bad argument #{} to '{name}' (number expected, got {got})",
                    i + 1
                ),
            ))
        }
    }
}

fn bit(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let unary: [Unary; 3] = [
        ("tobit", |x| x),
        ("bnot", |x| !x),
        ("bswap", |x| x.swap_bytes()),
    ];
    for (name, op) in unary {
        t.raw_set(
            name,
            lua.create_function(move |lua, args: Variadic<Value>| {
                match bit_arg(lua, &args, 0, name) {
                    Ok(x) => ok(lua, [Value::Number(f64::from(op(x)))]),
                    Err(e) => e,
                }
            })?,
        )?;
    }
    let folds: [Binary<i32>; 3] = [
        ("band", |a, b| a & b),
        ("bor", |a, b| a | b),
        ("bxor", |a, b| a ^ b),
    ];
    for (name, op) in folds {
        t.raw_set(
            name,
            lua.create_function(move |lua, args: Variadic<Value>| {
                let mut acc = match bit_arg(lua, &args, 0, name) {
                    Ok(x) => x,
                    Err(e) => return e,
                };
                for i in 1..args.len() {
                    match bit_arg(lua, &args, i, name) {
                        Ok(x) => acc = op(acc, x),
                        Err(e) => return e,
                    }
                }
                ok(lua, [Value::Number(f64::from(acc))])
            })?,
        )?;
    }
    let shifts: [Binary<u32>; 5] = [
        ("lshift", |x, n| ((x as u32) << n) as i32),
        ("rshift", |x, n| ((x as u32) >> n) as i32),
        ("arshift", |x, n| x >> n),
        ("rol", |x, n| (x as u32).rotate_left(n) as i32),
        ("ror", |x, n| (x as u32).rotate_right(n) as i32),
    ];
    for (name, op) in shifts {
        t.raw_set(
            name,
            lua.create_function(move |lua, args: Variadic<Value>| {
                let (x, n) = match (bit_arg(lua, &args, 0, name), bit_arg(lua, &args, 1, name)) {
                    (Ok(x), Ok(n)) => (x, n),
                    (Err(e), _) | (_, Err(e)) => return e,
                };
                ok(lua, [Value::Number(f64::from(op(x, (n & 31) as u32)))])
            })?,
        )?;
    }
    t.raw_set(
        "tohex",
        lua.create_function(|lua, args: Variadic<Value>| {
            let x = match bit_arg(lua, &args, 0, "tohex") {
                Ok(x) => x,
                Err(e) => return e,
            };
            let n = if args.get(1).is_some_and(|v| !v.is_nil()) {
                match bit_arg(lua, &args, 1, "tohex") {
                    Ok(n) => n,
                    Err(e) => return e,
                }
            } else {
                8
            };
            let upper = n < 0;
            let width = n.unsigned_abs().min(8) as usize;
            let hex = if upper {
                format!("{:08X}", x as u32)
            } else {
                format!("{:08x}", x as u32)
            };
            let s = lua.create_string(&hex[8 - width..])?;
            ok(lua, [Value::String(s)])
        })?,
    )?;
    Ok(t)
}

// ---- cjson ----

/// C's `%.{precision}g`.
pub fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let p = precision.max(1);
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if exp < -4 || exp >= p as i32 {
        let m = trim(mantissa.to_string());
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim(format!("{:.*}", decimals, v))
    }
}

fn json_null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// cjson's settings (lua_cjson.c's `json_config_t`, with its defaults): one per VM, kept
/// from script to script as the C module keeps them, until a script sets them back.
#[derive(Clone, Copy, Debug)]
struct JsonConfig {
    /// `encode_sparse_array`: encode an excessively sparse array as an object, not an error.
    sparse_convert: bool,
    /// ... sparse past this ratio of highest index to items (0: never sparse) ...
    sparse_ratio: i64,
    /// ... and past this highest index.
    sparse_safe: i64,
    encode_max_depth: i64,
    decode_max_depth: i64,
    /// `encode_invalid_numbers`: 0 off (an error), 1 on (`nan`, `inf`), 2 as `null`.
    encode_invalid_numbers: u8,
    decode_invalid_numbers: bool,
    /// `encode_keep_buffer`: only reported (the engine keeps no buffer).
    keep_buffer: bool,
    /// `encode_number_precision`: `%.<n>g`.
    number_precision: i64,
}

impl Default for JsonConfig {
    fn default() -> Self {
        JsonConfig {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: true,
            keep_buffer: true,
            number_precision: 14,
        }
    }
}

type SharedJsonConfig = Arc<Mutex<JsonConfig>>;

fn read_config(config: &SharedJsonConfig) -> JsonConfig {
    *config.lock().unwrap_or_else(PoisonError::into_inner)
}

fn cjson(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let config = SharedJsonConfig::default();
    t.raw_set("null", json_null())?;
    let c = Arc::clone(&config);
    t.raw_set(
        "encode",
        lua.create_function(move |lua, args: Variadic<Value>| {
            if args.len() != 1 {
                return fail(lua, "bad argument #1 to 'encode' (expected 1 argument)");
            }
            let mut out = Vec::new();
            match json_encode(&args[0], 0, &read_config(&c), &mut out) {
                Ok(()) => ok(lua, [Value::String(lua.create_string(&out)?)]),
                Err(msg) => fail(lua, msg),
            }
        })?,
    )?;
    let c = Arc::clone(&config);
    t.raw_set(
        "decode",
        lua.create_function(move |lua, args: Variadic<Value>| {
            let Some(Value::String(s)) = args.first() else {
                let got = args.first().map_or("no value", Value::type_name);
                return fail(
                    lua,
                    format!("bad argument #1 to 'decode' (string expected, got {got})"),
                );
            };
            let bytes = s.as_bytes().to_vec();
            let mut p = JsonParser {
                lua,
                s: &bytes,
                pos: 0,
                config: read_config(&c),
            };
            match p.document() {
                Ok(v) => ok(lua, [v]),
                Err(msg) => fail(lua, msg),
            }
        })?,
    )?;
    for (name, setting) in JSON_SETTINGS {
        let c = Arc::clone(&config);
        t.raw_set(
            *name,
            lua.create_function(move |lua, args: Variadic<Value>| {
                let mut guard = c.lock().unwrap_or_else(PoisonError::into_inner);
                match setting(
                    &mut Options {
                        lua,
                        name,
                        args: &args,
                    },
                    &mut guard,
                ) {
                    Ok(values) => ok(lua, values),
                    Err(msg) => fail(lua, msg),
                }
            })?,
        )?;
    }
    Ok(t)
}

/// A cjson setting function: reads its arguments into the config, answers the settings.
type Setting = fn(&mut Options<'_>, &mut JsonConfig) -> Result<Vec<Value>, String>;

/// cjson's settings functions, each as lua_cjson.c's `json_cfg_*`.
const JSON_SETTINGS: &[(&str, Setting)] = &[
    ("encode_sparse_array", |o, c| {
        o.at_most(3)?;
        Ok(vec![
            o.boolean(1, &mut c.sparse_convert)?,
            o.integer(2, &mut c.sparse_ratio, 0, i64::from(i32::MAX))?,
            o.integer(3, &mut c.sparse_safe, 0, i64::from(i32::MAX))?,
        ])
    }),
    ("encode_max_depth", |o, c| {
        o.at_most(1)?;
        Ok(vec![o.integer(
            1,
            &mut c.encode_max_depth,
            1,
            i64::from(i32::MAX),
        )?])
    }),
    ("decode_max_depth", |o, c| {
        o.at_most(1)?;
        Ok(vec![o.integer(
            1,
            &mut c.decode_max_depth,
            1,
            i64::from(i32::MAX),
        )?])
    }),
    ("encode_number_precision", |o, c| {
        o.at_most(1)?;
        Ok(vec![o.integer(1, &mut c.number_precision, 1, 14)?])
    }),
    ("encode_keep_buffer", |o, c| {
        o.at_most(1)?;
        Ok(vec![o.boolean(1, &mut c.keep_buffer)?])
    }),
    ("encode_invalid_numbers", |o, c| {
        o.at_most(1)?;
        Ok(vec![o.choice(
            1,
            &mut c.encode_invalid_numbers,
            &["off", "on", "null"],
        )?])
    }),
    ("decode_invalid_numbers", |o, c| {
        o.at_most(1)?;
        Ok(vec![o.boolean(1, &mut c.decode_invalid_numbers)?])
    }),
];

/// The arguments of a cjson settings function, read with lua_cjson.c's option helpers and
/// the Lua auxiliary library's errors (`bad argument #n to 'name' (...)`).
struct Options<'a> {
    lua: &'a Lua,
    name: &'a str,
    args: &'a [Value],
}

impl Options<'_> {
    fn bad(&self, n: usize, what: &str) -> String {
        format!("bad argument #{n} to '{}' ({what})", self.name)
    }

    /// `json_arg_init`: no more than `n` arguments.
    fn at_most(&self, n: usize) -> Result<(), String> {
        if self.args.len() > n {
            return Err(self.bad(n + 1, "found too many arguments"));
        }
        Ok(())
    }

    /// Argument `n` (1-based), absent as nil.
    fn arg(&self, n: usize) -> &Value {
        self.args.get(n - 1).unwrap_or(&Value::Nil)
    }

    /// `json_integer_option`: a nil argument keeps the setting. (lua_cjson.c names argument
    /// #1 in its range error whichever argument it was.)
    fn integer(&self, n: usize, setting: &mut i64, min: i64, max: i64) -> Result<Value, String> {
        let v = self.arg(n);
        if !v.is_nil() {
            let value = match v {
                Value::String(s) => std::str::from_utf8(&s.as_bytes())
                    .ok()
                    .and_then(|t| t.trim().parse::<f64>().ok()),
                v => number(v),
            };
            let Some(value) = value else {
                return Err(self.bad(n, &format!("number expected, got {}", v.type_name())));
            };
            // luaL_checkinteger truncates toward zero; cjson keeps the low 32 bits.
            let value = i64::from(value as i64 as i32);
            if !(min..=max).contains(&value) {
                return Err(self.bad(1, &format!("expected integer between {min} and {max}")));
            }
            *setting = value;
        }
        Ok(Value::Integer(*setting))
    }

    /// `json_enum_option` over on/off.
    fn boolean(&self, n: usize, setting: &mut bool) -> Result<Value, String> {
        let mut choice = u8::from(*setting);
        let v = self.choice(n, &mut choice, &["off", "on"])?;
        *setting = choice == 1;
        Ok(v)
    }

    /// `json_enum_option`: a boolean or one of `options` by name; answers a boolean for
    /// off/on and the name otherwise.
    fn choice(&self, n: usize, setting: &mut u8, options: &[&str]) -> Result<Value, String> {
        match self.arg(n) {
            Value::Nil => {}
            Value::Boolean(b) => *setting = u8::from(*b),
            v => {
                let text = match v {
                    Value::String(s) => s.as_bytes().to_vec(),
                    v => match number(v) {
                        Some(x) => format_g(x, 14).into_bytes(),
                        None => {
                            return Err(
                                self.bad(n, &format!("string expected, got {}", v.type_name()))
                            )
                        }
                    },
                };
                let Some(i) = options.iter().position(|o| o.as_bytes() == text) else {
                    let text = String::from_utf8_lossy(&text);
                    return Err(self.bad(n, &format!("invalid option '{text}'")));
                };
                *setting = i as u8;
            }
        }
        Ok(match *setting {
            0 | 1 => Value::Boolean(*setting == 1),
            i => Value::String(
                self.lua
                    .create_string(options[usize::from(i)])
                    .map_err(|e| e.to_string())?,
            ),
        })
    }
}

fn json_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            c if c < 0x20 || c == 0x7f => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
            c => out.push(c),
        }
    }
    out.push(b'"');
}

fn json_number(n: f64, config: &JsonConfig, out: &mut Vec<u8>) -> Result<(), String> {
    if !n.is_finite() {
        match config.encode_invalid_numbers {
            0 => return Err("Cannot serialise number: must not be NaN or Inf".into()),
            // lua_cjson.c writes NaN as `nan` itself (printf may give `-nan`).
            1 if n.is_nan() => {
                out.extend_from_slice(b"nan");
                return Ok(());
            }
            1 => {}
            _ => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
        }
    }
    out.extend_from_slice(format_g(n, config.number_precision as usize).as_bytes());
    Ok(())
}

/// The length of `t` as a JSON array, `None` for an object; Err for a sparse array.
fn json_array_len(t: &Table, config: &JsonConfig) -> Result<Option<usize>, String> {
    let (mut max, mut count) = (0usize, 0usize);
    for pair in t.pairs::<Value, Value>() {
        let Ok((k, _)) = pair else { return Ok(None) };
        match number(&k) {
            Some(n) if n >= 1.0 && n == n.floor() && n < 1e15 => {
                max = max.max(n as usize);
                count += 1;
            }
            _ => return Ok(None),
        }
    }
    let (max_i, count_i) = (max as i64, count as i64);
    if config.sparse_ratio > 0
        && max_i > count_i.saturating_mul(config.sparse_ratio)
        && max_i > config.sparse_safe
    {
        if !config.sparse_convert {
            return Err("Cannot serialise table: excessively sparse array".into());
        }
        return Ok(None);
    }
    Ok((max > 0).then_some(max))
}

fn json_encode(
    v: &Value,
    depth: usize,
    config: &JsonConfig,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => json_number(*i as f64, config, out)?,
        Value::Number(n) => json_number(*n, config, out)?,
        Value::String(s) => json_string(&s.as_bytes(), out),
        Value::Table(t) => {
            if depth as i64 + 1 > config.encode_max_depth {
                return Err(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                ));
            }
            match json_array_len(t, config)? {
                Some(len) => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        let item: Value = t.raw_get(i).map_err(|e| e.to_string())?;
                        json_encode(&item, depth + 1, config, out)?;
                    }
                    out.push(b']');
                }
                None => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.pairs::<Value, Value>() {
                        let (k, item) = pair.map_err(|e| e.to_string())?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match &k {
                            Value::String(s) => json_string(&s.as_bytes(), out),
                            k => match number(k) {
                                Some(n) => {
                                    out.push(b'"');
                                    json_number(n, config, out)?;
                                    out.push(b'"');
                                }
                                None => return Err(
                                    "Cannot serialise table: table key must be a number or string"
                                        .into(),
                                ),
                            },
                        }
                        out.push(b':');
                        json_encode(&item, depth + 1, config, out)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => {
            return Err(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            ))
        }
    }
    Ok(())
}

struct JsonParser<'a> {
    lua: &'a Lua,
    s: &'a [u8],
    pos: usize,
    config: JsonConfig,
}

impl JsonParser<'_> {
    /// cjson's parse error: what it expected, the token it found (by its token-type
    /// name), and where that token starts.
    fn error(&mut self, what: &str) -> String {
        self.skip_ws();
        let rest = &self.s[self.pos..];
        let found = match rest.first() {
            None => "T_END",
            Some(b'{') => "T_OBJ_BEGIN",
            Some(b'}') => "T_OBJ_END",
            Some(b'[') => "T_ARR_BEGIN",
            Some(b']') => "T_ARR_END",
            Some(b'"') => "T_STRING",
            Some(b':') => "T_COLON",
            Some(b',') => "T_COMMA",
            Some(c) if c.is_ascii_digit() || *c == b'-' => "T_NUMBER",
            _ if rest.starts_with(b"true") || rest.starts_with(b"false") => "T_BOOLEAN",
            _ if rest.starts_with(b"null") => "T_NULL",
            _ => "invalid token",
        };
        format!(
            "Expected {what} but found {found} at character {}",
            self.pos + 1
        )
    }

    fn skip_ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn document(&mut self) -> Result<Value, String> {
        let v = self.value(0)?;
        self.skip_ws();
        if self.pos < self.s.len() {
            return Err(self.error("the end"));
        }
        Ok(v)
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        self.skip_ws();
        let lua_err = |e: mlua::Error| e.to_string();
        match self.s.get(self.pos) {
            Some(b'{') | Some(b'[') if depth as i64 + 1 > self.config.decode_max_depth => {
                Err(format!(
                    "Found too many nested data structures ({}) at character {}",
                    depth + 1,
                    self.pos + 1
                ))
            }
            Some(b'{') => {
                self.pos += 1;
                let t = self.lua.create_table().map_err(lua_err)?;
                self.skip_ws();
                if self.s.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                    return Ok(Value::Table(t));
                }
                loop {
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b'"') {
                        return Err(self.error("object key string"));
                    }
                    let k = self.string()?;
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b':') {
                        return Err(self.error("colon"));
                    }
                    self.pos += 1;
                    let v = self.value(depth + 1)?;
                    t.raw_set(self.lua.create_string(&k).map_err(lua_err)?, v)
                        .map_err(lua_err)?;
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Value::Table(t));
                        }
                        _ => return Err(self.error("comma or object end")),
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let t = self.lua.create_table().map_err(lua_err)?;
                self.skip_ws();
                if self.s.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                    return Ok(Value::Table(t));
                }
                let mut i = 1;
                loop {
                    let v = self.value(depth + 1)?;
                    t.raw_set(i, v).map_err(lua_err)?;
                    i += 1;
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Value::Table(t));
                        }
                        _ => return Err(self.error("comma or array end")),
                    }
                }
            }
            Some(b'"') => {
                let s = self.string()?;
                Ok(Value::String(self.lua.create_string(&s).map_err(lua_err)?))
            }
            Some(b't') if self.s[self.pos..].starts_with(b"true") => {
                self.pos += 4;
                Ok(Value::Boolean(true))
            }
            Some(b'f') if self.s[self.pos..].starts_with(b"false") => {
                self.pos += 5;
                Ok(Value::Boolean(false))
            }
            Some(b'n') if self.s[self.pos..].starts_with(b"null") => {
                self.pos += 4;
                Ok(json_null())
            }
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                let start = self.pos;
                while self.s.get(self.pos).is_some_and(|c| {
                    c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')
                }) {
                    self.pos += 1;
                }
                std::str::from_utf8(&self.s[start..self.pos])
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .map(Value::Number)
                    .ok_or_else(|| {
                        format!(
                            "Expected value but found invalid number at character {}",
                            start + 1
                        )
                    })
            }
            _ => Err(self.error("value")),
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let v = self
            .s
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok());
        let Some(v) = v else {
            return Err(self.error("value"));
        };
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<Vec<u8>, String> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                self.pos = start;
                return Err(self.error("value"));
            };
            self.pos += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.pos) else {
                        return Err(self.error("value"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xd800..0xdc00).contains(&cp)
                                && self.s.get(self.pos..self.pos + 2) == Some(b"\\u")
                            {
                                self.pos += 2;
                                let low = self.hex4()?;
                                cp = 0x10000
                                    + ((cp - 0xd800) << 10)
                                    + (low.wrapping_sub(0xdc00) & 0x3ff);
                            }
                            let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err(self.error("value")),
                    }
                }
                c => out.push(c),
            }
        }
    }
}

// ---- cmsgpack ----

fn cmsgpack(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, args: Variadic<Value>| {
            if args.is_empty() {
                return fail(lua, "MessagePack pack needs input.");
            }
            let mut out = Vec::new();
            for v in args.iter() {
                pack(v, 0, &mut out);
            }
            ok(lua, [Value::String(lua.create_string(&out)?)])
        })?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, args: Variadic<Value>| unpack_full(lua, &args, "unpack", 0, 0))?,
    )?;
    t.raw_set(
        "unpack_one",
        lua.create_function(|lua, args: Variadic<Value>| {
            match opt_integer(&args, 2, "unpack_one", 0) {
                Ok(offset) => unpack_full(lua, &args, "unpack_one", 1, offset),
                Err(msg) => fail(lua, msg),
            }
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lua.create_function(|lua, args: Variadic<Value>| {
            let limit = match args.get(1) {
                None | Some(Value::Nil) => Err(arg_error(2, "unpack_limit", "number", args.get(1))),
                Some(_) => opt_integer(&args, 2, "unpack_limit", 0),
            };
            match limit.and_then(|l| Ok((l, opt_integer(&args, 3, "unpack_limit", 0)?))) {
                Ok((limit, offset)) => unpack_full(lua, &args, "unpack_limit", limit, offset),
                Err(msg) => fail(lua, msg),
            }
        })?,
    )?;
    Ok(t)
}

/// Lua's `bad argument #n to 'name' (T expected, got U)`.
fn arg_error(n: usize, name: &str, expected: &str, got: Option<&Value>) -> String {
    let got = got.map_or("no value", Value::type_name);
    format!("bad argument #{n} to '{name}' ({expected} expected, got {got})")
}

/// `luaL_optinteger`: argument `n` (1-based) as an integer (a number truncated, or a numeric
/// string), `default` when absent or nil.
fn opt_integer(args: &[Value], n: usize, name: &str, default: i64) -> Result<i64, String> {
    let v = match args.get(n - 1) {
        None | Some(Value::Nil) => return Ok(default),
        Some(v) => v,
    };
    let value = match v {
        Value::String(s) => std::str::from_utf8(&s.as_bytes())
            .ok()
            .and_then(|t| t.trim().parse::<f64>().ok()),
        v => number(v),
    };
    value
        .map(|x| x as i64)
        .ok_or_else(|| arg_error(n, name, "number", Some(v)))
}

/// lua_cmsgpack.c's `mp_unpack_full`: every value (limit and offset 0), or up to `limit`
/// values from `offset`, then preceded by the offset after them (-1 at the end of input).
fn unpack_full(lua: &Lua, args: &[Value], name: &str, limit: i64, offset: i64) -> Outcome {
    let bytes = match args.first() {
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => number(v)
            .map(|x| format_g(x, 14))
            .unwrap_or_default()
            .into_bytes(),
        v => return fail(lua, arg_error(1, name, "string", v)),
    };
    let decode_all = limit == 0 && offset == 0;
    if offset < 0 || limit < 0 {
        // lua_cmsgpack.c prints the input's length where it names the limit.
        return fail(
            lua,
            format!(
                "Invalid request to unpack with offset of {} and limit of {}.",
                offset as i32,
                bytes.len() as i32
            ),
        );
    }
    if offset as u64 > bytes.len() as u64 {
        return fail(
            lua,
            format!(
                "Start offset {} greater than input length {}.",
                offset as i32,
                bytes.len() as i32
            ),
        );
    }
    let limit = if decode_all { i64::MAX } else { limit };
    let mut pos = offset as usize;
    let mut values = Vec::new();
    while pos < bytes.len() && (values.len() as i64) < limit {
        match unpack(lua, &bytes, &mut pos, 0) {
            Ok(v) => values.push(v),
            Err(msg) => return fail(lua, msg),
        }
    }
    if !decode_all {
        let next = if pos == bytes.len() { -1 } else { pos as i64 };
        values.insert(0, Value::Integer(next));
    }
    ok(lua, values)
}

fn pack_int(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        let u = n as u64;
        if u < 128 {
            out.push(u as u8);
        } else if u < 256 {
            out.extend_from_slice(&[0xcc, u as u8]);
        } else if u < 65536 {
            out.push(0xcd);
            out.extend_from_slice(&(u as u16).to_be_bytes());
        } else if u <= u32::MAX as u64 {
            out.push(0xce);
            out.extend_from_slice(&(u as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&u.to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= i32::MIN as i64 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn pack_len(len: usize, fix: u8, fix_max: usize, codes: [u8; 2], out: &mut Vec<u8>) {
    if len < fix_max {
        out.push(fix | len as u8);
    } else if len <= 0xffff {
        out.push(codes[0]);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(codes[1]);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

/// The length of `t` if it is an array with no holes (keys exactly 1..n).
fn msgpack_array_len(t: &Table) -> Option<usize> {
    let (mut max, mut count) = (0usize, 0usize);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair.ok()?;
        let n = number(&k)?;
        if n < 1.0 || n != n.floor() || n > 1e15 {
            return None;
        }
        max = max.max(n as usize);
        count += 1;
    }
    (max == count).then_some(count)
}

fn pack(v: &Value, depth: usize, out: &mut Vec<u8>) {
    match v {
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => pack_int(*i, out),
        Value::Number(n) => {
            if n.is_finite() && *n == n.trunc() && n.abs() < 9.2e18 {
                pack_int(*n as i64, out);
            } else if (*n as f32) as f64 == *n || n.is_nan() {
                out.push(0xca);
                out.extend_from_slice(&(*n as f32).to_be_bytes());
            } else {
                out.push(0xcb);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
        Value::String(s) => {
            let b = s.as_bytes();
            if b.len() < 32 {
                out.push(0xa0 | b.len() as u8);
            } else if b.len() <= 0xff {
                out.extend_from_slice(&[0xd9, b.len() as u8]);
            } else {
                pack_len(b.len(), 0, 0, [0xda, 0xdb], out);
            }
            out.extend_from_slice(&b);
        }
        Value::Table(t) if depth < MSGPACK_MAX_NESTING => match msgpack_array_len(t) {
            Some(len) => {
                pack_len(len, 0x90, 16, [0xdc, 0xdd], out);
                for i in 1..=len {
                    let item: Value = t.raw_get(i).unwrap_or(Value::Nil);
                    pack(&item, depth + 1, out);
                }
            }
            None => {
                let pairs: Vec<(Value, Value)> =
                    t.pairs::<Value, Value>().filter_map(Result::ok).collect();
                pack_len(pairs.len(), 0x80, 16, [0xde, 0xdf], out);
                for (k, item) in &pairs {
                    pack(k, depth + 1, out);
                    pack(item, depth + 1, out);
                }
            }
        },
        _ => out.push(0xc0),
    }
}

fn take<'a>(s: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], String> {
    let end = pos.checked_add(n).filter(|&e| e <= s.len());
    let Some(end) = end else {
        return Err("Missing bytes in input.".into());
    };
    let out = &s[*pos..end];
    *pos = end;
    Ok(out)
}

fn be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

fn unpack(lua: &Lua, s: &[u8], pos: &mut usize, depth: usize) -> Result<Value, String> {
    let lua_err = |e: mlua::Error| e.to_string();
    if depth > 1000 {
        return Err("Bad data format in input.".into());
    }
    let c = take(s, pos, 1)?[0];
    let num = |n: f64| Ok(Value::Number(n));
    let string = |lua: &Lua, len: usize, pos: &mut usize| -> Result<Value, String> {
        let b = take(s, pos, len)?;
        Ok(Value::String(lua.create_string(b).map_err(lua_err)?))
    };
    match c {
        0x00..=0x7f => num(f64::from(c)),
        0xe0..=0xff => num(f64::from(c as i8)),
        0xa0..=0xbf => string(lua, usize::from(c & 0x1f), pos),
        0x90..=0x9f => array(lua, s, pos, usize::from(c & 0x0f), depth),
        0x80..=0x8f => map(lua, s, pos, usize::from(c & 0x0f), depth),
        0xc0 => Ok(Value::Nil),
        0xc2 => Ok(Value::Boolean(false)),
        0xc3 => Ok(Value::Boolean(true)),
        0xca => num(f64::from(f32::from_bits(be(take(s, pos, 4)?) as u32))),
        0xcb => num(f64::from_bits(be(take(s, pos, 8)?))),
        0xcc => num(be(take(s, pos, 1)?) as f64),
        0xcd => num(be(take(s, pos, 2)?) as f64),
        0xce => num(be(take(s, pos, 4)?) as f64),
        0xcf => num(be(take(s, pos, 8)?) as f64),
        0xd0 => num(f64::from(be(take(s, pos, 1)?) as u8 as i8)),
        0xd1 => num(f64::from(be(take(s, pos, 2)?) as u16 as i16)),
        0xd2 => num(f64::from(be(take(s, pos, 4)?) as u32 as i32)),
        0xd3 => num(be(take(s, pos, 8)?) as i64 as f64),
        0xc4 | 0xd9 => {
            let len = be(take(s, pos, 1)?) as usize;
            string(lua, len, pos)
        }
        0xc5 | 0xda => {
            let len = be(take(s, pos, 2)?) as usize;
            string(lua, len, pos)
        }
        0xc6 | 0xdb => {
            let len = be(take(s, pos, 4)?) as usize;
            string(lua, len, pos)
        }
        0xdc => {
            let len = be(take(s, pos, 2)?) as usize;
            array(lua, s, pos, len, depth)
        }
        0xdd => {
            let len = be(take(s, pos, 4)?) as usize;
            array(lua, s, pos, len, depth)
        }
        0xde => {
            let len = be(take(s, pos, 2)?) as usize;
            map(lua, s, pos, len, depth)
        }
        0xdf => {
            let len = be(take(s, pos, 4)?) as usize;
            map(lua, s, pos, len, depth)
        }
        _ => Err("Bad data format in input.".into()),
    }
}

fn array(lua: &Lua, s: &[u8], pos: &mut usize, len: usize, depth: usize) -> Result<Value, String> {
    let t = lua.create_table().map_err(|e| e.to_string())?;
    // Each element takes at least a byte: a length beyond the input is a short input, not
    // an allocation.
    for i in 1..=len {
        let v = unpack(lua, s, pos, depth + 1)?;
        t.raw_set(i, v).map_err(|e| e.to_string())?;
    }
    Ok(Value::Table(t))
}

fn map(lua: &Lua, s: &[u8], pos: &mut usize, len: usize, depth: usize) -> Result<Value, String> {
    let t = lua.create_table().map_err(|e| e.to_string())?;
    for _ in 0..len {
        let k = unpack(lua, s, pos, depth + 1)?;
        let v = unpack(lua, s, pos, depth + 1)?;
        if !k.is_nil() {
            t.raw_set(k, v).map_err(|e| e.to_string())?;
        }
    }
    Ok(Value::Table(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_c() {
        assert_eq!(format_g(0.1, 14), "0.1");
        assert_eq!(format_g(1e20, 14), "1e+20");
        assert_eq!(format_g(1.5, 14), "1.5");
        assert_eq!(format_g(123456789012345.0, 14), "1.2345678901234e+14");
        assert_eq!(format_g(0.0001, 14), "0.0001");
        assert_eq!(format_g(0.00001, 14), "1e-05");
    }

    #[test]
    fn tobit_wraps_and_rounds() {
        assert_eq!(tobit(4294967295.0), -1);
        assert_eq!(tobit(1.5), 2);
        assert_eq!(tobit(2.5), 2);
    }
}
