//! Record keys as YCSB names them: `"user"` followed by the record number, hashed with
//! 64-bit FNV-1a unless inserts are ordered (`Utils.fnvhash64`, `CoreWorkload.buildKeyName`).

/// FNV-1a's 64-bit offset basis and prime (Fowler, Noll and Vo; the constants of
/// `Utils.FNV_OFFSET_BASIS_64` and `Utils.FNV_PRIME_64`).
const FNV_OFFSET_BASIS: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64` (also `Utils.hash`): 64-bit FNV-1a over the value's 8 bytes, least
/// significant first, then Java's `Math.abs`, which leaves `i64::MIN` negative (no input
/// hashes to it among the record numbers YCSB uses, but the function is total as Java's is).
#[inline]
pub fn fnvhash64(value: i64) -> i64 {
    let hash = value
        .to_le_bytes()
        .iter()
        .fold(FNV_OFFSET_BASIS, |hash, &octet| {
            (hash ^ u64::from(octet)).wrapping_mul(FNV_PRIME)
        });
    (hash as i64).wrapping_abs()
}

/// YCSB's `CoreWorkload.buildKeyName`: `"user"`, then zeros until the number has
/// `zeropadding` characters, then the decimal record number, hashed with [`fnvhash64`] unless
/// `ordered` (`insertorder=ordered`). `zeropadding` 1 (YCSB's default) never pads.
///
/// The number is Java's `long`: a `keynum` above `i64::MAX` prints as the negative number
/// Java would see (no YCSB run comes near it).
pub fn build_key_name(keynum: u64, zeropadding: usize, ordered: bool) -> String {
    let mut key = String::with_capacity(4 + zeropadding.max(20));
    build_key_into(keynum, zeropadding, ordered, &mut key);
    key
}

/// [`build_key_name`] written into `out`, which is cleared first; it allocates only when
/// `out` has less room than the key (24 bytes hold any key with `zeropadding` up to 20).
pub fn build_key_into(keynum: u64, zeropadding: usize, ordered: bool, out: &mut String) {
    let number = if ordered {
        keynum as i64
    } else {
        fnvhash64(keynum as i64)
    };
    out.clear();
    out.push_str("user");
    for _ in decimal_len(number)..zeropadding {
        out.push('0');
    }
    push_decimal(number, out);
}

/// Appends Java's `Long.toString(n)` to `out`: the digits written backwards into a stack
/// buffer, one `push_str`, no formatter (a key is built for every operation).
fn push_decimal(n: i64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut left = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (left % 10) as u8;
        left /= 10;
        if left == 0 {
            break;
        }
    }
    if n < 0 {
        out.push('-');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// How many characters Java's `Long.toString` gives `n`, the sign included.
fn decimal_len(n: i64) -> usize {
    let digits = n
        .unsigned_abs()
        .checked_ilog10()
        .map_or(1, |d| d as usize + 1);
    digits + usize::from(n < 0)
}
