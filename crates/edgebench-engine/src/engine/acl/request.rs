//! A request as the ACL check sees it: its command's [`Catalog`] id, its arguments, and where
//! its keys and channels are, found once for all of a user's selectors.
//!
//! Found cheaply: the command's [`KeyPlan`] says where its keys are, so for most commands
//! (GET, SET, HSET...) the keys are walked in the arguments as the selectors ask, without a
//! list being built, and only commands whose keys need the metadata's general walk (keyword
//! searches, key counts) get a list. A restricted user's check on GET/SET costs a few hundred
//! instructions this way (docs/PERFORMANCE.md); a check that built its lists cost twice that.

use smallvec::SmallVec;

use super::catalog::{self, Catalog, ChannelPlan, KeyPlan, RangeSpec};
use super::{READ, WRITE};
use crate::engine::cmd::server::command;

/// A request for the check.
pub(crate) struct Request<'a> {
    pub(crate) id: usize,
    pub(crate) args: &'a [&'a [u8]],
    keys: Keys<'a>,
    channels: ChannelPlan,
}

/// Where a request's keys are.
enum Keys<'a> {
    /// None (or key specs that do not fit the arguments: the command replies with its own
    /// error, as the metadata's walk finds no keys then).
    None,
    /// Index ranges that fit the arguments (checked when the request was made).
    Ranges(&'a [RangeSpec]),
    /// Argument 1, with the access it needs.
    One(u8),
    /// Listed by the general walk.
    Listed(SmallVec<[(usize, u8); 4]>),
}

impl<'a> Request<'a> {
    /// The request `args` of command `id`.
    #[inline]
    pub(crate) fn new(id: usize, args: &'a [&'a [u8]]) -> Request<'a> {
        let cat = Catalog::get();
        let keys = match &cat.key_plans[id] {
            KeyPlan::Ranges(specs) if ranges_fit(specs, args.len()) => Keys::Ranges(specs),
            KeyPlan::Ranges(_) | KeyPlan::None => Keys::None,
            KeyPlan::Set if args.len() > 1 => {
                let get = args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get"));
                Keys::One(if get { READ | WRITE } else { WRITE })
            }
            KeyPlan::Set => Keys::None,
            KeyPlan::General(m) => Keys::Listed(
                command::keys_of(m, args)
                    .into_iter()
                    .filter(|(at, _)| *at < args.len())
                    .map(|(at, flags)| (at, catalog::need_of(flags)))
                    .collect(),
            ),
        };
        Request {
            id,
            args,
            keys,
            channels: cat.channel_plans[id],
        }
    }

    /// The first key position (in argument order) for which `refused(position, access
    /// needed)` holds, if any.
    #[inline]
    pub(crate) fn first_key_where(
        &self,
        mut refused: impl FnMut(usize, u8) -> bool,
    ) -> Option<usize> {
        match &self.keys {
            Keys::None => None,
            Keys::One(need) => refused(1, *need).then_some(1),
            Keys::Listed(keys) => keys
                .iter()
                .find(|&&(at, need)| refused(at, need))
                .map(|&(at, _)| at),
            Keys::Ranges(specs) => {
                for spec in *specs {
                    let (first, last) = bounds(spec, self.args.len() as i64);
                    let mut i = first;
                    while i <= last {
                        if refused(i as usize, spec.need) {
                            return Some(i as usize);
                        }
                        i += spec.keystep.max(1);
                    }
                }
                None
            }
        }
    }

    /// The first channel position for which `refused(position, is a pattern)` holds, if any.
    #[inline]
    pub(crate) fn first_channel_where(
        &self,
        mut refused: impl FnMut(usize, bool) -> bool,
    ) -> Option<usize> {
        let (range, pattern) = match self.channels {
            ChannelPlan::None => return None,
            ChannelPlan::First => (1..2.min(self.args.len()), false),
            ChannelPlan::All => (1..self.args.len(), false),
            ChannelPlan::Patterns => (1..self.args.len(), true),
        };
        range.into_iter().find(|&at| refused(at, pattern))
    }

    /// Every key position with the access it needs, in argument order.
    #[cfg(test)]
    pub(crate) fn keys(&self) -> Vec<(usize, u8)> {
        let mut out = Vec::new();
        self.first_key_where(|at, need| {
            out.push((at, need));
            false
        });
        out
    }
}

/// A key spec's first and last key position for `argc` arguments (Redis's range
/// arithmetic); may be an empty or out-of-bounds range, which [`ranges_fit`] rules out.
fn bounds(spec: &RangeSpec, argc: i64) -> (i64, i64) {
    let first = spec.first;
    let last = if spec.lastkey >= 0 {
        first + spec.lastkey
    } else if spec.limit == 0 {
        argc + spec.lastkey
    } else {
        first + ((argc - first) / spec.limit + spec.lastkey)
    };
    (first, last)
}

/// Whether every spec's range lies within `argc` arguments; when one does not, the
/// metadata's walk finds no keys at all.
fn ranges_fit(specs: &[RangeSpec], argc: usize) -> bool {
    let argc = argc as i64;
    specs.iter().all(|spec| {
        let (first, last) = bounds(spec, argc);
        !(last >= argc || last < first || first >= argc)
    })
}
