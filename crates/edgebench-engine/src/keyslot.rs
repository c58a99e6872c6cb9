//! Redis Cluster's key-to-slot rule: a key's slot is CRC16 (XMODEM: polynomial 0x1021,
//! initial value 0) of the key, or of the first non-empty `{hash tag}` in it, modulo 16384
//! (Redis Cluster specification, "Keys distribution model" and "Hash tags"; `keyHashSlot` in
//! Redis's `cluster.c`).
//!
//! It sits here, at the bottom, because everything above needs the same answer: the cluster
//! client's routing, and the stores that place what one `MULTI … EXEC` writes in one slot.

/// Hash slots in a Redis Cluster.
pub const SLOTS: usize = 16384;

/// CRC16/XMODEM, bit by bit: the cost is a few ns per key byte, paid once per request.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The hash slot of `key`, honouring `{hash tags}` as Redis does.
pub fn hash_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    crc16(hashed) & (SLOTS as u16 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_the_cluster_specification() {
        // The specification's CRC16 check value, and slots Redis itself reports
        // (CLUSTER KEYSLOT).
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(hash_slot(b"foo"), 12182);
        assert_eq!(hash_slot(b"bar"), 5061);
        assert_eq!(hash_slot(b"{user1000}.following"), hash_slot(b"user1000"));
        assert_eq!(hash_slot(b"foo{}{bar}"), hash_slot(b"foo{}{bar}"));
        assert_ne!(hash_slot(b"foo{}{bar}"), hash_slot(b"bar"));
        assert_eq!(hash_slot(b"foo{{bar}}zap"), hash_slot(b"{bar"));
        assert_eq!(hash_slot(b"foo{bar}{zap}"), hash_slot(b"bar"));
    }
}
