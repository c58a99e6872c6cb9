//! A selector's command permissions as rules (`-@all +@hash -hdel +get`), the text ACL
//! GETUSER and ACL LIST show and ACL SETUSER reads back into the same bitmap.
//!
//! The method is Redis 7.0's: start from `+@all` when the future-commands bit is set, else
//! `-@all`; repeatedly apply the category that fits the remaining differences best (more
//! commands in common than different, then the fewest differences, then the most in
//! common), tracking on a scratch selector what the rules emitted so far produce; then fix
//! the last differences one command at a time. Categories are tried in Redis's order, so
//! the categories chosen are Redis's; single commands come in name order (Redis's follow
//! its hash table's order, which is not stable across servers either).

use super::catalog::{Catalog, CATEGORIES};
use super::selector::Selector;

/// The command rules of `s`.
pub(crate) fn describe_commands(s: &Selector) -> String {
    let cat = Catalog::get();
    let additive = !s.allows_future_commands();
    let base = if additive { "-@all" } else { "+@all" };
    let mut rules: Vec<String> = vec![base.to_string()];
    // What the rules emitted so far allow.
    let mut emitted = Selector::empty(false);
    let _ = emitted.apply(base.as_bytes());
    // The selector with the categories applied so far taken back out.
    let mut rest = s.clone();
    let mut applied = [false; CATEGORIES.len()];
    loop {
        let mut best = None;
        let (mut min_diff, mut max_same) = (usize::MAX, 0);
        for (j, _) in CATEGORIES.iter().enumerate().filter(|(j, _)| !applied[*j]) {
            let bit = 1u32 << j;
            let (mut on, mut off) = (0, 0);
            for id in (0..cat.len()).filter(|&id| cat.categories[id] & bit != 0) {
                if rest.bit(id) {
                    on += 1;
                } else {
                    off += 1;
                }
            }
            let (diff, same) = if additive { (off, on) } else { (on, off) };
            if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                best = Some(j);
                min_diff = diff;
                max_same = same;
            }
        }
        let Some(j) = best else { break };
        let bit = 1u32 << j;
        emitted.change_category(bit, additive);
        rest.change_category(bit, !additive);
        let sign = if additive { '+' } else { '-' };
        rules.push(format!("{sign}@{}", CATEGORIES[j]));
        applied[j] = true;
    }
    for id in 0..cat.len() {
        let want = s.bit(id);
        if want != emitted.bit(id) {
            let sign = if want { '+' } else { '-' };
            rules.push(format!("{sign}{}", cat.names[id]));
            emitted.change(id, want);
        }
        if !want {
            for arg in s.first_args.get(&id).into_iter().flatten() {
                rules.push(format!("+{}|{arg}", cat.names[id]));
            }
        }
    }
    rules.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(ops: &[&str]) -> String {
        let mut s = Selector::empty(false);
        for op in ops {
            s.apply(op.as_bytes()).unwrap();
        }
        describe_commands(&s)
    }

    #[test]
    fn rules_are_described_from_the_closest_categories() {
        assert_eq!(described(&[]), "-@all");
        assert_eq!(described(&["+@all"]), "+@all");
        assert_eq!(described(&["+@all", "-@dangerous"]), "+@all -@dangerous");
        assert_eq!(
            described(&["+@hash", "-hdel", "+get"]),
            "-@all +@hash +get -hdel"
        );
        assert_eq!(described(&["+select|0"]), "-@all +select|0");
    }

    #[test]
    fn a_description_read_back_gives_the_same_permissions() {
        for ops in [
            &["+@read", "+@write", "-@dangerous", "+config|get"][..],
            &["+@all", "-@hash", "+hget", "-client|kill"][..],
        ] {
            let mut s = Selector::empty(false);
            for op in ops {
                s.apply(op.as_bytes()).unwrap();
            }
            let text = describe_commands(&s);
            let mut back = Selector::empty(false);
            for op in text.split(' ') {
                back.apply(op.as_bytes()).unwrap();
            }
            assert_eq!(back.allowed, s.allowed, "{text}");
        }
    }
}
