//! The orders Redis leaves search results in when it sorts them by distance, reproduced so
//! that points at equal distances (the same coordinates, mirror images) come out in
//! Redis's order too.
//!
//! Redis sorts with two algorithms. A full sort is the C library's `qsort`, which glibc
//! (the library of the Redis this engine is checked against) implements as a top-down merge
//! sort: stable, left half first, ties taken from the left. A sort of only the first
//! `COUNT` results is Redis's `pqsort`, a Bentley–McIlroy three-way quicksort (median of
//! three, or ninther past 40 elements; insertion sort below 7) that skips partitions lying
//! wholly outside the wanted prefix. Neither is stable, so neither can be replaced by
//! `sort_by`, and both take the comparator as C does: an `i32` from a comparison of
//! doubles that is not a total order when a distance is NaN (Rust's sorts may panic on
//! such a comparator; these never do).
//!
//! Both are written here from the algorithms' descriptions, over element indices.

/// Redis's distance comparator: 1 if `a` is farther, 0 if equal, -1 otherwise (NaN is
/// "nearer" than anything, and than itself).
pub fn compare_distance(a: f64, b: f64) -> i32 {
    if a > b {
        1
    } else if a == b {
        0
    } else {
        -1
    }
}

/// Sorts `v` as glibc's `qsort` does: a top-down merge sort, stable.
pub fn merge_sort<T>(v: &mut Vec<T>, cmp: impl Fn(&T, &T) -> i32) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    let mut tmp = vec![0usize; v.len()];
    merge_sort_indices(&mut order, &mut tmp, &|a: usize, b: usize| {
        cmp(&v[a], &v[b])
    });
    permute(v, &order);
}

fn merge_sort_indices(idx: &mut [usize], tmp: &mut [usize], cmp: &dyn Fn(usize, usize) -> i32) {
    let n = idx.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    {
        let (left, right) = idx.split_at_mut(n1);
        merge_sort_indices(left, tmp, cmp);
        merge_sort_indices(right, tmp, cmp);
    }
    let (mut i, mut j, mut k) = (0, n1, 0);
    while i < n1 && j < n {
        if cmp(idx[i], idx[j]) <= 0 {
            tmp[k] = idx[i];
            i += 1;
        } else {
            tmp[k] = idx[j];
            j += 1;
        }
        k += 1;
    }
    // What is left of the right half is already in place.
    while i < n1 {
        tmp[k] = idx[i];
        i += 1;
        k += 1;
    }
    idx[..k].copy_from_slice(&tmp[..k]);
}

/// Reorders `v` so that its `i`th element is the old `order[i]`th.
fn permute<T>(v: &mut Vec<T>, order: &[usize]) {
    let mut old: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(
        order
            .iter()
            .filter_map(|&i| old.get_mut(i).and_then(Option::take)),
    );
}

/// Sorts `v` enough that its first `wanted` elements are the smallest, in order, as
/// Redis's `pqsort` leaves them (the rest in whatever order the partitions left).
pub fn partial_sort<T>(v: &mut [T], wanted: usize, cmp: impl Fn(&T, &T) -> i32) {
    if wanted == 0 || v.is_empty() {
        return;
    }
    let last_wanted = wanted - 1;
    // Pending partitions (start, len); the order they are done in does not matter, as they
    // are disjoint. A stack rather than recursion: the depth is the input's to choose.
    let mut pending = vec![(0usize, v.len())];
    while let Some((lo, n)) = pending.pop() {
        if n < 7 {
            insertion_sort(v, lo, n, &cmp);
            continue;
        }
        let (lt, gt) = partition(v, lo, n, &cmp);
        // `lt` and `gt` are the lengths of the "less" run at `lo` and the "greater" run at
        // the end.
        for (start, len) in [(lo, lt), (lo + n - gt, gt)] {
            if len > 1 && start <= last_wanted {
                pending.push((start, len));
            }
        }
    }
}

fn insertion_sort<T>(v: &mut [T], lo: usize, n: usize, cmp: &impl Fn(&T, &T) -> i32) {
    for m in lo + 1..lo + n {
        let mut l = m;
        while l > lo && cmp(&v[l - 1], &v[l]) > 0 {
            v.swap(l, l - 1);
            l -= 1;
        }
    }
}

/// The index of the median of three.
fn median3<T>(v: &[T], a: usize, b: usize, c: usize, cmp: &impl Fn(&T, &T) -> i32) -> usize {
    if cmp(&v[a], &v[b]) < 0 {
        if cmp(&v[b], &v[c]) < 0 {
            b
        } else if cmp(&v[a], &v[c]) < 0 {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]) > 0 {
        b
    } else if cmp(&v[a], &v[c]) < 0 {
        a
    } else {
        c
    }
}

/// Swaps `n` elements from `a` with `n` from `b`, one pair at a time, in order.
fn swap_runs<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        v.swap(a + i, b + i);
    }
}

/// One Bentley–McIlroy partition of `v[lo..lo + n]` (`n >= 7`): returns the lengths of the
/// run of elements less than the pivot (now first) and greater than it (now last).
fn partition<T>(v: &mut [T], lo: usize, n: usize, cmp: &impl Fn(&T, &T) -> i32) -> (usize, usize) {
    let mut pm = lo + n / 2;
    if n > 7 {
        let mut pl = lo;
        let mut pn = lo + n - 1;
        if n > 40 {
            let d = n / 8;
            pl = median3(v, pl, pl + d, pl + 2 * d, cmp);
            pm = median3(v, pm - d, pm, pm + d, cmp);
            pn = median3(v, pn - 2 * d, pn - d, pn, cmp);
        }
        pm = median3(v, pl, pm, pn, cmp);
    }
    v.swap(lo, pm);
    // Equal elements gather at both ends ([lo+1, pa) and (pd, end]), less after the first
    // group, greater before the second.
    let (mut pa, mut pb) = (lo + 1, lo + 1);
    let (mut pc, mut pd) = (lo + n - 1, lo + n - 1);
    loop {
        while pb <= pc {
            let c = cmp(&v[pb], &v[lo]);
            if c > 0 {
                break;
            }
            if c == 0 {
                v.swap(pa, pb);
                pa += 1;
            }
            pb += 1;
        }
        while pb <= pc {
            let c = cmp(&v[pc], &v[lo]);
            if c < 0 {
                break;
            }
            if c == 0 {
                v.swap(pc, pd);
                pd -= 1;
            }
            pc -= 1;
        }
        if pb > pc {
            break;
        }
        v.swap(pb, pc);
        pb += 1;
        pc -= 1;
    }
    let end = lo + n;
    let r = (pa - lo).min(pb - pa);
    swap_runs(v, lo, pb - r, r);
    let r = (pd - pc).min(end - pd - 1);
    swap_runs(v, pb, end - r, r);
    (pb - pa, pd - pc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_key(a: &(f64, u32), b: &(f64, u32)) -> i32 {
        compare_distance(a.0, b.0)
    }

    #[test]
    fn merge_sort_is_stable() {
        let mut v = vec![(2.0, 0), (1.0, 1), (2.0, 2), (1.0, 3), (0.5, 4)];
        merge_sort(&mut v, by_key);
        assert_eq!(v, vec![(0.5, 4), (1.0, 1), (1.0, 3), (2.0, 0), (2.0, 2)]);
    }

    #[test]
    fn sorts_survive_nan() {
        let mut v: Vec<(f64, u32)> = (0..100)
            .map(|i| {
                (
                    if i % 7 == 0 {
                        f64::NAN
                    } else {
                        f64::from(i % 13)
                    },
                    i,
                )
            })
            .collect();
        let mut w = v.clone();
        merge_sort(&mut v, by_key);
        partial_sort(&mut w, 10, by_key);
        assert_eq!(v.len(), 100);
        assert_eq!(w.len(), 100);
    }

    #[test]
    fn partial_sort_orders_the_prefix() {
        let mut seed = 12345u64;
        for n in [1usize, 5, 7, 8, 40, 41, 300] {
            for wanted in [1usize, 3, n / 2 + 1, n] {
                let mut v: Vec<(f64, u32)> = (0..n as u32)
                    .map(|i| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        (((seed >> 33) % 50) as f64, i)
                    })
                    .collect();
                let mut sorted: Vec<f64> = v.iter().map(|p| p.0).collect();
                sorted.sort_by(f64::total_cmp);
                partial_sort(&mut v, wanted.min(n), by_key);
                let got: Vec<f64> = v.iter().take(wanted.min(n)).map(|p| p.0).collect();
                assert_eq!(got, sorted[..wanted.min(n)], "n={n} wanted={wanted}");
            }
        }
    }
}
