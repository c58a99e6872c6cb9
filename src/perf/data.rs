//! The data `test_ingestion` and `test_tx` write, and the payload of `test_group`'s Blob
//! operations: zero-filled Blob payloads and the PBM model (reference §3.2–3.3). The Northwind
//! Customer/Order factories are in [`super::factory`], the generator in [`super::random`].
//!
//! Invariants:
//! - Everything random comes from a [`JavaRandom`], a bit-exact `java.util.Random`, so an
//!   operation seeded like PadoGrid's (`randomSeed`, default 1) picks the same key numbers.
//! - Keys of one PBM group share a Redis Cluster hash slot: they carry the hash tag
//!   `{<prefix><groupNumber>}` — the co-location PadoGrid gets from `ClientProfileKey`'s
//!   hashCode (group number only) and Redisson's partitioning.

// `perf::data::{Entity, FactoryKind}`: the paths callers used before the Northwind factories
// had their own module.
pub use super::factory::{Entity, FactoryKind};
pub use super::random::JavaRandom;

/// A zero-filled Blob payload of `payload_size` bytes (PadoGrid: `new Blob(new byte[n])`).
/// The runner makes one per operation and sends the same bytes for every entry.
pub fn zero_blob(payload_size: usize) -> Vec<u8> {
    vec![0; payload_size]
}

/// The Redis Cluster hash tag that co-locates a PBM group: `{<prefix><groupNumber>}`.
pub fn group_tag(prefix: &str, group_number: u64) -> String {
    format!("{{{prefix}{group_number}}}")
}

/// `EligKey` (reference §3.3): one member's eligibility in a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EligKey {
    /// `memberNumber` (PadoGrid sets it equal to the group number string, e.g. `x1`).
    pub member_number: String,
    /// `groupNumber`, e.g. `x1`.
    pub group_number: String,
    /// `personNumber` (`(short)keyIndex`).
    pub person_number: i16,
    /// `effectiveDate`, ms since the epoch.
    pub effective_date_ms: i64,
    /// `termDate`, ms since the epoch.
    pub term_date_ms: i64,
    /// `agn`.
    pub agn: i32,
    /// `partCntlNumber`.
    pub part_cntl_number: i16,
    /// `membershipAgnId`.
    pub membership_agn_id: i32,
    /// `memberAgnId`.
    pub member_agn_id: i32,
}

impl EligKey {
    /// The Redis hash holding every eligibility entry of the key's group:
    /// `eligibility:{x1}`. One hash per group keeps a group's members in one slot and lets
    /// `tx` read them with one `HGETALL`.
    pub fn redis_key(&self) -> String {
        format!("eligibility:{{{}}}", self.group_number)
    }

    /// The entry's field in that hash: the five fields `equals`/`hashCode` use
    /// (`x1,x1,7,<eff ms>,<term ms>`), so two equal keys are one entry, as in a Java map.
    pub fn redis_field(&self) -> String {
        format!(
            "{},{},{},{},{}",
            self.member_number,
            self.group_number,
            self.person_number,
            self.effective_date_ms,
            self.term_date_ms
        )
    }

    /// All nine fields in declaration order, comma-separated: the key's part of a stored
    /// value (see [`pbm_value`]).
    pub fn serialized(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{}",
            self.member_number,
            self.group_number,
            self.person_number,
            self.effective_date_ms,
            self.term_date_ms,
            self.agn,
            self.part_cntl_number,
            self.membership_agn_id,
            self.member_agn_id
        )
    }
}

/// A stored PBM value: the serialized key, a newline, then the Blob's bytes. The key comes
/// along because Redisson stores it too, and `tx` takes the profile's carrier and contract
/// numbers from it.
pub fn pbm_value(serialized_key: &str, blob: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(serialized_key.len() + 1 + blob.len());
    v.extend_from_slice(serialized_key.as_bytes());
    v.push(b'\n');
    v.extend_from_slice(blob);
    v
}

/// Splits a [`pbm_value`] into its serialized key and its Blob; `None` when it has no
/// newline (not written by edgebench).
pub fn split_pbm_value(value: &[u8]) -> Option<(&str, &[u8])> {
    let nl = value.iter().position(|b| *b == b'\n')?;
    let key = std::str::from_utf8(&value[..nl]).ok()?;
    Some((key, &value[nl + 1..]))
}

/// `ClientProfileKey`: equal and co-located by group number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientProfileKey {
    /// `groupNumber`.
    pub group_number: String,
    /// `carrierNumber`.
    pub carrier_number: String,
    /// `contractNumber`.
    pub contract_number: String,
}

impl ClientProfileKey {
    /// PadoGrid fills all three fields with the same `prefix+keyIndex`.
    pub fn new(key: &str) -> Self {
        ClientProfileKey {
            group_number: key.into(),
            carrier_number: key.into(),
            contract_number: key.into(),
        }
    }

    /// `profile:{x1}`: the group's hash tag, so a profile lives beside its eligibility.
    /// `ClientProfileKey` equality is the group number, so this string key holds the one
    /// profile of the group.
    pub fn redis_key(&self) -> String {
        format!("profile:{{{}}}", self.group_number)
    }

    /// The three fields, comma-separated (see [`pbm_value`]).
    pub fn serialized(&self) -> String {
        format!(
            "{},{},{}",
            self.group_number, self.carrier_number, self.contract_number
        )
    }
}

/// `GroupSummary`, the result of one `tx` on a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSummary {
    /// `groupNumber`.
    pub group_number: String,
    /// From the profile.
    pub carrier_number: String,
    /// From the profile.
    pub contract_number: String,
    /// Eligibility entries found for the group.
    pub member_count: u32,
    /// Sum of their Blob sizes.
    pub total_blob_size: u64,
    /// When the summary was written, ms since the epoch.
    pub written_time_ms: i64,
}

impl GroupSummary {
    /// `summary:{x1}`.
    pub fn redis_key(&self) -> String {
        format!("summary:{{{}}}", self.group_number)
    }

    /// Hash fields to store with HSET, in declaration order.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("groupNumber", self.group_number.clone()),
            ("carrierNumber", self.carrier_number.clone()),
            ("contractNumber", self.contract_number.clone()),
            ("memberCount", self.member_count.to_string()),
            ("totalBlobSize", self.total_blob_size.to_string()),
            ("writtenTime", self.written_time_ms.to_string()),
        ]
    }
}

/// PadoGrid's `baseDate` `06132019 000000.000` in UTC, ms since the epoch (PadoGrid parses it
/// in the local zone; we fix UTC so keys do not depend on where the test runs).
pub const PBM_BASE_DATE_MS: i64 = 1_560_384_000_000;

/// The eligibility entries of one `put` thread (reference §3.2): thread `t` (1-based) of a
/// run with `count_per_thread` entries and `member_set_size` members per group. Returned in
/// write order; the group numbers of consecutive member sets increase by one.
pub fn eligibility_keys(
    prefix: &str,
    thread: u64,
    count_per_thread: u64,
    member_set_size: u32,
) -> Vec<EligKey> {
    let mut sets = MemberSets::new(prefix, thread, count_per_thread, member_set_size);
    let mut out = Vec::with_capacity(count_per_thread as usize);
    let mut i = 0;
    while i < count_per_thread {
        out.extend(sets.next_set());
        i += sets.member_set_size();
    }
    out
}

/// A thread's member sets in PadoGrid's order (reference §3.2): each call to
/// [`MemberSets::next_set`] gives the `memberSetSize` members of the next group number.
/// Ingestion (`put`, `putall`) and `test_tx` (`getall`) walk the same sequence, so `tx`
/// finds exactly what ingestion wrote.
#[derive(Debug, Clone)]
pub struct MemberSets {
    prefix: String,
    member_set_size: u64,
    group_number: u64,
    key_index: u64,
    eff_ms: i64,
}

impl MemberSets {
    /// Thread `thread` (1-based) of a run with `count_per_thread` entries per thread.
    pub fn new(prefix: &str, thread: u64, count_per_thread: u64, member_set_size: u32) -> Self {
        let mss = u64::from(member_set_size.max(1));
        let start = (thread.max(1) - 1) * count_per_thread;
        MemberSets {
            prefix: prefix.to_string(),
            member_set_size: mss,
            group_number: start / mss + 1,
            key_index: start + 1,
            eff_ms: PBM_BASE_DATE_MS + (start as i64) * 1000,
        }
    }

    /// Members per set.
    pub fn member_set_size(&self) -> u64 {
        self.member_set_size
    }

    /// The group number the next set will have.
    pub fn next_group_number(&self) -> u64 {
        self.group_number
    }

    /// The next group's members; effective and term dates one second later than the last
    /// set's, plus `k` ms for member `k`.
    pub fn next_set(&mut self) -> Vec<EligKey> {
        let key = format!("{}{}", self.prefix, self.group_number);
        let mut out = Vec::with_capacity(self.member_set_size as usize);
        for k in 0..self.member_set_size {
            let i = self.key_index;
            out.push(EligKey {
                member_number: key.clone(),
                group_number: key.clone(),
                person_number: i as i16,
                effective_date_ms: self.eff_ms + k as i64,
                term_date_ms: self.eff_ms + k as i64,
                agn: i as i32,
                part_cntl_number: i as i16,
                membership_agn_id: i as i32,
                member_agn_id: i as i32,
            });
            self.key_index += 1;
        }
        self.group_number += 1;
        self.eff_ms += 1000;
        out
    }
}

/// The profile keys of one thread: `prefix + keyIndex` for its range.
pub fn profile_keys(prefix: &str, thread: u64, count_per_thread: u64) -> Vec<ClientProfileKey> {
    let start = (thread - 1) * count_per_thread + 1;
    (start..start + count_per_thread)
        .map(|i| ClientProfileKey::new(&format!("{prefix}{i}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_is_zero_filled() {
        assert_eq!(zero_blob(4), vec![0, 0, 0, 0]);
        assert!(zero_blob(0).is_empty());
    }

    #[test]
    fn eligibility_keys_follow_padogrid() {
        // 2 threads x 6 entries, member sets of 3: thread 2 starts at group 3, keyIndex 7.
        let keys = eligibility_keys("x", 2, 6, 3);
        assert_eq!(keys.len(), 6);
        let groups: Vec<&str> = keys.iter().map(|k| k.group_number.as_str()).collect();
        assert_eq!(groups, vec!["x3", "x3", "x3", "x4", "x4", "x4"]);
        let persons: Vec<i16> = keys.iter().map(|k| k.person_number).collect();
        assert_eq!(persons, vec![7, 8, 9, 10, 11, 12]);
        assert_eq!(keys[0].effective_date_ms, PBM_BASE_DATE_MS + 6000);
        assert_eq!(keys[4].effective_date_ms, PBM_BASE_DATE_MS + 7001);
        assert_eq!(keys[0].member_number, "x3");
        assert_eq!(keys[0].redis_key(), "eligibility:{x3}");
        assert_eq!(
            keys[0].redis_field(),
            format!("x3,x3,7,{0},{0}", PBM_BASE_DATE_MS + 6000)
        );
        let v = pbm_value(&keys[0].serialized(), &[0, 0]);
        assert_eq!(
            split_pbm_value(&v),
            Some((
                format!("x3,x3,7,{0},{0},7,7,7,7", PBM_BASE_DATE_MS + 6000).as_str(),
                &[0u8, 0][..]
            ))
        );
        // Co-location: a group's eligibility and profile keys share the hash tag.
        assert!(keys[0].redis_key().contains(&group_tag("x", 3)));
        assert_eq!(ClientProfileKey::new("x3").redis_key(), "profile:{x3}");
    }

    #[test]
    fn profile_keys_per_thread() {
        let k: Vec<String> = profile_keys("x", 3, 2)
            .into_iter()
            .map(|k| k.group_number)
            .collect();
        assert_eq!(k, vec!["x5", "x6"]);
    }
}
