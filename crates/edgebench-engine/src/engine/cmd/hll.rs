//! HyperLogLog commands: PFADD, PFCOUNT (one key, or the union of several), PFMERGE,
//! PFDEBUG (GETREG, DECODE, ENCODING, TODENSE) and PFSELFTEST (a shorter run than Redis's:
//! see [`hll::self_test`]), over the representation in
//! [`crate::engine::types::hll`], which is Redis's byte for byte.
//!
//! A HyperLogLog is a string value: GET returns its bytes, SET of bytes from redis-server
//! makes one here. Every command checks the value first (WRONGTYPE for another type,
//! `WRONGTYPE Key is not a valid HyperLogLog string value.` for a string without the
//! header), and reports `INVALIDOBJ` for sparse data that does not add up.
//!
//! Writes follow Redis: PFADD that raises no register, and PFCOUNT that finds a valid
//! cached count, only read the key (they do not count as a change to a WATCHed key);
//! PFCOUNT of one key stores the count it computes in the header. CONFIG
//! `hll-sparse-max-bytes` ([`hll::SPARSE_MAX_BYTES`] by default) decides where PFADD and
//! PFMERGE turn a sparse value dense.
//!
//! Keyspace events: `pfadd` for a PFADD that changed the value and for every PFMERGE (Redis
//! announces the merge as a mass add).

use std::borrow::Cow;

use super::{is, spec, Ctx, KeySpec, Spec, ALL_ARGS, ONE_KEY};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Locked, Value};
use crate::engine::types::encoding::Shape;
use crate::engine::types::hll::{self, HllError, REGISTERS};
use crate::resp::reply::Reply;

/// PFDEBUG's key: its second argument.
const SECOND_ARG: KeySpec = KeySpec::Range {
    first: 2,
    last: 2,
    step: 1,
};

/// The HyperLogLog commands.
pub const COMMANDS: &[Spec] = &[
    spec("pfadd", -2, ONE_KEY, true, pfadd),
    spec("pfcount", -2, ALL_ARGS, false, pfcount),
    spec("pfmerge", -2, ALL_ARGS, true, pfmerge),
    spec("pfdebug", 3, SECOND_ARG, true, pfdebug),
    spec("pfselftest", 1, KeySpec::None, false, pfselftest),
];

impl From<HllError> for CmdError {
    fn from(e: HllError) -> CmdError {
        CmdError::Other(Cow::Owned(e.to_string()))
    }
}

/// Whether adding `elements` would raise a register of the (validated) value `s`. A
/// sparse value is decoded once (16384 bytes, however many elements); a corrupt one
/// answers yes, so that the write path reports it.
fn raises_any(s: &[u8], elements: &[&[u8]]) -> bool {
    let runs = elements.iter().map(|e| hll::register_and_run(e));
    if !hll::is_sparse(s) {
        return runs
            .into_iter()
            .any(|(index, run)| run > hll::dense_register(s, index));
    }
    let mut registers = [0u8; REGISTERS];
    if hll::merge_into(&mut registers, s).is_err() {
        return true;
    }
    runs.into_iter().any(|(index, run)| run > registers[index])
}

impl Locked<'_> {
    /// The HyperLogLog at `key`, checked (`None` when missing).
    fn hll(&mut self, key: &[u8]) -> Result<Option<&Vec<u8>>, CmdError> {
        let Some(s) = self.get_str(key)? else {
            return Ok(None);
        };
        hll::validate(s)?;
        Ok(Some(s))
    }

    /// The HyperLogLog at `key` for writing, created empty when missing. Either way it is
    /// `raw` (OBJECT ENCODING), as Redis's `createHLLObject` and `dbUnshareStringValue`
    /// make it.
    fn hll_mut(&mut self, key: &[u8]) -> Result<&mut Vec<u8>, CmdError> {
        if self.hll(key)?.is_none() {
            let mut entry = Entry::new(Value::Str(hll::new_sparse()));
            entry.shape = Shape::only(Shape::RAW);
            self.insert(key, entry);
        } else {
            self.unshare_string(key);
        }
        self.string_mut(key)?.ok_or(CmdError::WrongType)
    }

    /// PFADD: adds `elements`; whether the HyperLogLog changed (created, or a register
    /// raised).
    pub fn pfadd(&mut self, key: &[u8], elements: &[&[u8]]) -> Result<bool, CmdError> {
        let created = match self.hll(key)? {
            None => true,
            Some(s) if !raises_any(s, elements) => {
                // Redis unshared it before adding (`raw`), though nothing changed.
                self.unshare_string(key);
                return Ok(false);
            }
            Some(_) => false,
        };
        let sparse_max = self.hll_sparse_max();
        let s = self.hll_mut(key)?;
        let mut changed = created;
        for e in elements {
            changed |= hll::add(s, e, sparse_max)?;
        }
        if changed {
            hll::invalidate_cache(s);
            self.notify(Classes::STRING, "pfadd", key);
        }
        Ok(changed)
    }

    /// PFCOUNT: the estimated cardinality of one HyperLogLog (its cached count, or computed
    /// and cached), or of the union of several (nothing cached). Missing keys are empty.
    pub fn pfcount(&mut self, keys: &[&[u8]]) -> Result<u64, CmdError> {
        if let [key] = keys {
            let Some(s) = self.hll(key)? else {
                return Ok(0);
            };
            if let Some(count) = hll::cached_count(s) {
                // Redis unshares the value before it reads the cache (`raw`).
                self.unshare_string(key);
                return Ok(count);
            }
            let s = self.hll_mut(key)?;
            let count = hll::estimate(s)?;
            hll::store_count(s, count);
            return Ok(count);
        }
        let mut registers = [0u8; REGISTERS];
        for key in keys {
            if let Some(s) = self.hll(key)? {
                hll::merge_into(&mut registers, s)?;
            }
        }
        Ok(hll::estimate_registers(&registers))
    }

    /// PFMERGE: `dest` becomes the union of itself and `sources` (dense if any input was
    /// dense, else sparse until it outgrows the sparse limit).
    pub fn pfmerge(&mut self, dest: &[u8], sources: &[&[u8]]) -> Result<(), CmdError> {
        let mut registers = [0u8; REGISTERS];
        let mut dense = false;
        for key in std::iter::once(&dest).chain(sources) {
            if let Some(s) = self.hll(key)? {
                dense |= !hll::is_sparse(s);
                hll::merge_into(&mut registers, s)?;
            }
        }
        let sparse_max = self.hll_sparse_max();
        let s = self.hll_mut(dest)?;
        if dense {
            hll::to_dense(s)?;
        }
        for (i, &value) in registers.iter().enumerate() {
            if value != 0 {
                hll::set_register(s, i, value, sparse_max)?;
            }
        }
        hll::invalidate_cache(s);
        // PFMERGE is announced as a PFADD (a mass add), as Redis announces it.
        self.notify(Classes::STRING, "pfadd", dest);
        Ok(())
    }
}

fn pfadd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(i64::from(ctx.ks.pfadd(args[1], &args[2..])?)))
}

fn pfcount(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // Redis replies with a signed 64-bit integer: a (crafted) count of 2^63 shows negative.
    Ok(Reply::Int(ctx.ks.pfcount(&args[1..])? as i64))
}

fn pfmerge(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    ctx.ks.pfmerge(args[1], &args[2..])?;
    Ok(Reply::ok())
}

fn pfdebug(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (sub, key) = (args[1], args[2]);
    if ctx.ks.hll(key)?.is_none() {
        return Err(CmdError::Other(Cow::Borrowed(
            "ERR The specified key does not exist",
        )));
    }
    // Every subcommand unshares the value first (`raw`), as Redis's PFDEBUG does.
    ctx.ks.unshare_string(key);
    let Some(s) = ctx.ks.hll(key)? else {
        return Err(CmdError::WrongType);
    };
    if is(sub, "getreg") {
        let s = ctx.ks.hll_mut(key)?;
        hll::to_dense(s)?;
        let registers = hll::registers(s);
        Ok(Reply::Array(
            registers
                .into_iter()
                .map(|r| Reply::Int(r.into()))
                .collect(),
        ))
    } else if is(sub, "decode") {
        if !hll::is_sparse(s) {
            return Err(CmdError::Other(Cow::Borrowed(
                "ERR HLL encoding is not sparse",
            )));
        }
        Ok(Reply::Bulk(hll::decode_sparse(s).into_bytes()))
    } else if is(sub, "encoding") {
        let name = if hll::is_sparse(s) { "sparse" } else { "dense" };
        Ok(Reply::Status(Cow::Borrowed(name)))
    } else if is(sub, "todense") {
        if !hll::is_sparse(s) {
            return Ok(Reply::Int(0));
        }
        hll::to_dense(ctx.ks.hll_mut(key)?)?;
        Ok(Reply::Int(1))
    } else {
        let sub = String::from_utf8_lossy(sub);
        Err(CmdError::Other(Cow::Owned(format!(
            "ERR Unknown PFDEBUG subcommand '{sub}'"
        ))))
    }
}

fn pfselftest(_: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    hll::self_test(&mut super::set::random_u64)
        .map_err(|text| CmdError::Other(Cow::Owned(format!("ERR {text}"))))?;
    Ok(Reply::ok())
}
