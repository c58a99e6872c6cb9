//! LCS: the longest common subsequence of two strings (LEN: its length; IDX: the matching
//! ranges, longest last-first as Redis walks them back, with MINMATCHLEN and WITHMATCHLEN).
//!
//! It is the textbook dynamic programme over a table of (n+1)(m+1) lengths, as Redis
//! computes it, so that when several subsequences are equally long the one returned (and
//! its ranges) is Redis's. The table is what costs: see [`MAX_TABLE_BYTES`]. LEN alone
//! needs two rows only, and keeps only two.

use std::borrow::Cow;

use super::Ctx;
use crate::engine::cmd::strings::MAX_STRING_LEN;
use crate::engine::cmd::{is, parse_i64};
use crate::engine::error::CmdError;
use crate::engine::keyspace::Locked;
use crate::resp::reply::Reply;

/// The largest LCS table, in bytes (4 per cell), any request may build: 512 MiB, the same
/// bound as Redis 7.0.15's (`proto-max-bulk-len`), so the same requests are refused with the
/// same error. Without it two 512 MB strings would ask for an exabyte-sized table; with it
/// the time is bounded too (at most 2^27 cells).
pub const MAX_TABLE_BYTES: usize = MAX_STRING_LEN;

/// What LCS replies with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LcsReply {
    /// The subsequence itself (the default).
    String,
    /// Its length (LEN).
    Len,
    /// The matching ranges and the length (IDX), ranges shorter than `min_len` left out,
    /// each with its length when `with_len`.
    Idx {
        /// MINMATCHLEN (0: every range).
        min_len: u64,
        /// WITHMATCHLEN.
        with_len: bool,
    },
}

/// One matching range: bytes `a.0..=a.1` of the first string equal `b.0..=b.1` of the
/// second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LcsMatch {
    /// The range in the first string.
    pub a: (usize, usize),
    /// The range in the second string.
    pub b: (usize, usize),
}

/// LCS's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LcsOutcome {
    /// The subsequence.
    String(Vec<u8>),
    /// Its length.
    Len(usize),
    /// The ranges (last first) and the length.
    Idx(Vec<LcsMatch>, usize),
}

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

/// The full table: `at(i, j)` is the LCS length of `a[..i]` and `b[..j]`.
struct Table {
    cells: Vec<u32>,
    width: usize,
}

impl Table {
    fn build(a: &[u8], b: &[u8]) -> Table {
        let width = b.len() + 1;
        let mut cells = vec![0u32; (a.len() + 1) * width];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                cells[i * width + j] = if a[i - 1] == b[j - 1] {
                    cells[(i - 1) * width + j - 1] + 1
                } else {
                    cells[(i - 1) * width + j].max(cells[i * width + j - 1])
                };
            }
        }
        Table { cells, width }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }
}

/// The LCS length with two rows of the table.
fn lcs_len(a: &[u8], b: &[u8]) -> usize {
    let mut prev = vec![0u32; b.len() + 1];
    let mut row = vec![0u32; b.len() + 1];
    for &x in a {
        for j in 1..=b.len() {
            row[j] = if x == b[j - 1] {
                prev[j - 1] + 1
            } else {
                prev[j].max(row[j - 1])
            };
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()] as usize
}

/// Walks the table back from the end as Redis does: the subsequence and the ranges (a
/// range ends at a mismatch or at the start of either string).
fn walk_back(a: &[u8], b: &[u8], t: &Table, min_len: u64) -> (Vec<u8>, Vec<LcsMatch>) {
    let len = t.at(a.len(), b.len()) as usize;
    let mut seq = vec![0u8; len];
    let mut ranges = Vec::new();
    let (mut i, mut j, mut k) = (a.len(), b.len(), len);
    // The range being extended backwards: (a start, a end, b start, b end).
    let mut open: Option<(usize, usize, usize, usize)> = None;
    while i > 0 && j > 0 {
        let mut close = false;
        if a[i - 1] == b[j - 1] {
            seq[k - 1] = a[i - 1];
            open = match open {
                None => Some((i - 1, i - 1, j - 1, j - 1)),
                Some((sa, ea, sb, eb)) if sa == i && sb == j => Some((sa - 1, ea, sb - 1, eb)),
                Some(r) => {
                    close = true;
                    Some(r)
                }
            };
            if open.is_some_and(|(sa, _, sb, _)| sa == 0 || sb == 0) {
                close = true;
            }
            k -= 1;
            i -= 1;
            j -= 1;
        } else {
            if t.at(i - 1, j) > t.at(i, j - 1) {
                i -= 1;
            } else {
                j -= 1;
            }
            close = open.is_some();
        }
        if close {
            if let Some((sa, ea, sb, eb)) = open.take() {
                if (ea - sa + 1) as u64 >= min_len {
                    ranges.push(LcsMatch {
                        a: (sa, ea),
                        b: (sb, eb),
                    });
                }
            }
        }
    }
    (seq, ranges)
}

impl Locked<'_> {
    /// LCS of the strings at `a` and `b` (a missing key is the empty string). Either key
    /// of another type is an error; so is a table over [`MAX_TABLE_BYTES`].
    pub fn lcs(&mut self, a: &[u8], b: &[u8], want: LcsReply) -> Result<LcsOutcome, CmdError> {
        let a_len = self
            .get_str(a)
            .map_err(|_| not_strings())?
            .map_or(0, Vec::len);
        let b_len = self
            .get_str(b)
            .map_err(|_| not_strings())?
            .map_or(0, Vec::len);
        check_table_size(a_len, b_len)?;
        // One string copied (the keys' values cannot both be borrowed), within the cap.
        let a = self.get_str(a)?.cloned().unwrap_or_default();
        let b = self.get_str(b)?.map_or(&[][..], |b| &b[..]);
        Ok(match want {
            LcsReply::Len => LcsOutcome::Len(lcs_len(&a, b)),
            LcsReply::String => {
                let table = Table::build(&a, b);
                LcsOutcome::String(walk_back(&a, b, &table, 0).0)
            }
            LcsReply::Idx { min_len, .. } => {
                let table = Table::build(&a, b);
                let len = table.at(a.len(), b.len()) as usize;
                LcsOutcome::Idx(walk_back(&a, b, &table, min_len).1, len)
            }
        })
    }
}

/// Redis's error for a key of another type.
fn not_strings() -> CmdError {
    err("ERR The specified keys must contain string values")
}

/// Refuses a table over [`MAX_TABLE_BYTES`], with Redis's error.
fn check_table_size(a_len: usize, b_len: usize) -> Result<(), CmdError> {
    let bytes = (a_len as u128 + 1)
        .saturating_mul(b_len as u128 + 1)
        .saturating_mul(4);
    if bytes > MAX_TABLE_BYTES as u128 {
        return Err(err(
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    Ok(())
}

/// LCS's options, in Redis's order of checks.
fn parse_options(args: &[&[u8]]) -> Result<LcsReply, CmdError> {
    let (mut len, mut idx, mut with_len, mut min_len) = (false, false, false, 0i64);
    let mut j = 3;
    while j < args.len() {
        let opt = args[j];
        if is(opt, "idx") {
            idx = true;
        } else if is(opt, "len") {
            len = true;
        } else if is(opt, "withmatchlen") {
            with_len = true;
        } else if is(opt, "minmatchlen") && j + 1 < args.len() {
            min_len = parse_i64(args[j + 1])?.max(0);
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    if len && idx {
        return Err(err(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    Ok(if idx {
        LcsReply::Idx {
            min_len: min_len as u64,
            with_len,
        }
    } else if len {
        LcsReply::Len
    } else {
        LcsReply::String
    })
}

fn range(r: (usize, usize)) -> Reply {
    Reply::Array(vec![Reply::Int(r.0 as i64), Reply::Int(r.1 as i64)])
}

pub(super) fn lcs(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // The types are checked before the options.
    for key in &args[1..3] {
        ctx.ks.get_str(key).map_err(|_| not_strings())?;
    }
    let want = parse_options(args)?;
    let with_len = matches!(want, LcsReply::Idx { with_len: true, .. });
    Ok(match ctx.ks.lcs(args[1], args[2], want)? {
        LcsOutcome::String(s) => Reply::Bulk(s),
        LcsOutcome::Len(n) => Reply::Int(n as i64),
        LcsOutcome::Idx(matches, len) => {
            let matches = matches
                .into_iter()
                .map(|m| {
                    let mut item = vec![range(m.a), range(m.b)];
                    if with_len {
                        item.push(Reply::Int((m.a.1 - m.a.0 + 1) as i64));
                    }
                    Reply::Array(item)
                })
                .collect();
            Reply::Map(vec![
                (Reply::bulk(b"matches"), Reply::Array(matches)),
                (Reply::bulk(b"len"), Reply::Int(len as i64)),
            ])
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_row_length_equals_the_table() {
        for (a, b) in [
            (&b"ohmytext"[..], &b"mynewtext"[..]),
            (b"", b"abc"),
            (b"aaaa", b"aa"),
            (b"abcbdab", b"bdcaba"),
        ] {
            let t = Table::build(a, b);
            assert_eq!(lcs_len(a, b), t.at(a.len(), b.len()) as usize);
        }
    }

    #[test]
    fn walking_back_gives_redis_ranges() {
        let (a, b) = (b"ohmytext", b"mynewtext");
        let t = Table::build(a, b);
        let (seq, ranges) = walk_back(a, b, &t, 0);
        assert_eq!(seq, b"mytext");
        assert_eq!(
            ranges,
            [
                LcsMatch {
                    a: (4, 7),
                    b: (5, 8)
                },
                LcsMatch {
                    a: (2, 3),
                    b: (0, 1)
                }
            ]
        );
    }

    #[test]
    fn tables_over_the_cap_are_refused() {
        assert!(check_table_size(1 << 20, 1 << 20).is_err());
        assert!(check_table_size(10_000, 10_000).is_ok());
        // Exactly 2^27 cells of 4 bytes is allowed, one row more is not.
        assert!(check_table_size(8191, 16383).is_ok());
        assert!(check_table_size(8192, 16383).is_err());
        assert!(check_table_size(usize::MAX, usize::MAX).is_err());
    }
}
