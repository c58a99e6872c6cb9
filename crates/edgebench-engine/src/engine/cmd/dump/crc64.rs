//! CRC-64 as Redis computes it over DUMP payloads: the Jones polynomial
//! (0xad93d23594c935a9), reflected input and output, initial value 0, no final xor.

/// The reflected Jones polynomial.
const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;

const TABLE: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// The CRC-64 of `data`.
pub fn crc64(data: &[u8]) -> u64 {
    update(0, data)
}

/// The CRC-64 of what gave `crc`, followed by `data` (an RDB file's checksum, computed as
/// it is written).
pub fn update(crc: u64, data: &[u8]) -> u64 {
    data.iter().fold(crc, |crc, &b| {
        TABLE[((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn check_value_of_the_jones_crc() {
        // Redis's crc64 self-test value for "123456789".
        assert_eq!(super::crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }
}
