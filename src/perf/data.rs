//! The data perf_test writes: zero-filled Blob payloads, the PBM model (reference §3.2–3.3)
//! and the Northwind Customer/Order factories with one-to-many ER (reference §4.2–4.4).
//!
//! Invariants:
//! - Everything random comes from a [`JavaRandom`], a bit-exact `java.util.Random`, so an
//!   operation seeded like PadoGrid's (`randomSeed`, default 1) picks the same key numbers.
//! - Keys of one PBM group share a Redis Cluster hash slot: they carry the hash tag
//!   `{<prefix><groupNumber>}` — the co-location PadoGrid gets from `ClientProfileKey`'s
//!   hashCode (group number only) and Redisson's partitioning.
//! - A Northwind child (Order) created for a parent (Customer) carries the parent's key in
//!   `customer_id`, so every Order names an existing Customer.
//! - Fake values come from small built-in word lists; they look like Northwind rows and
//!   respect the column lengths of reference §4.4.

use std::fmt::Write as _;

use super::config::KeyFormat;

/// `java.util.Random`: the 48-bit linear congruential generator of the JDK
/// (`Random.java`: multiplier 0x5DEECE66D, addend 0xB, seed scrambled with the multiplier).
#[derive(Debug, Clone)]
pub struct JavaRandom {
    seed: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    /// `new Random(seed)`.
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed as u64 ^ MULTIPLIER) & MASK,
        }
    }

    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(MULTIPLIER).wrapping_add(0xB)) & MASK;
        (self.seed >> (48 - bits)) as i64 as i32
    }

    /// `nextInt()`.
    pub fn next_int(&mut self) -> i32 {
        self.next(32)
    }

    /// `nextInt(bound)`, uniform in `[0, bound)`. A bound below 1 is treated as 1 (Java
    /// throws; callers validate their bounds in the config).
    pub fn next_int_bound(&mut self, bound: i32) -> i32 {
        let bound = bound.max(1);
        let mut r = self.next(31);
        let m = bound - 1;
        if bound & m == 0 {
            return ((i64::from(bound) * i64::from(r)) >> 31) as i32;
        }
        let mut u = r;
        loop {
            r = u % bound;
            if u.wrapping_sub(r).wrapping_add(m) >= 0 {
                return r;
            }
            u = self.next(31);
        }
    }

    /// `nextLong()`.
    pub fn next_long(&mut self) -> i64 {
        (i64::from(self.next(32)) << 32).wrapping_add(i64::from(self.next(32)))
    }

    /// `nextDouble()`, uniform in `[0, 1)`.
    pub fn next_double(&mut self) -> f64 {
        let hi = i64::from(self.next(26)) << 27;
        let lo = i64::from(self.next(27));
        (hi + lo) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `nextBoolean()`.
    pub fn next_boolean(&mut self) -> bool {
        self.next(1) != 0
    }

    /// One element of `items` (non-empty).
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next_int_bound(items.len() as i32) as usize]
    }
}

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

/// The built-in data-object factories PadoGrid's `factory.class` names map to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactoryKind {
    /// `…nw.impl.CustomerFactoryImpl` → table `customers`.
    Customer,
    /// `…nw.impl.OrderFactoryImpl` → table `orders`.
    Order,
}

impl FactoryKind {
    /// Maps a Java class name by its simple name, so every product's package works
    /// (`org.redis.demo.nw.impl.`, `org.redisson.demo.nw.impl.`, `org.hazelcast.demo.nw.impl.` …).
    pub fn from_class(class: &str) -> Option<Self> {
        match class.rsplit('.').next()? {
            "CustomerFactoryImpl" => Some(Self::Customer),
            "OrderFactoryImpl" => Some(Self::Order),
            _ => None,
        }
    }

    /// The SQL table (`@Table(name=…)`).
    pub fn table(self) -> &'static str {
        match self {
            Self::Customer => "customers",
            Self::Order => "orders",
        }
    }
}

/// A Northwind customer (`customers`, column lengths in comments).
#[derive(Debug, Clone, PartialEq)]
pub struct Customer {
    /// 20, primary key.
    pub customer_id: String,
    /// 50.
    pub company_name: String,
    /// 50.
    pub contact_name: String,
    /// 50.
    pub contact_title: String,
    /// 100.
    pub address: String,
    /// 50.
    pub city: String,
    /// 10.
    pub region: String,
    /// 10.
    pub postal_code: String,
    /// 100.
    pub country: String,
    /// 30.
    pub phone: String,
    /// 30.
    pub fax: String,
}

/// A Northwind order (`orders`).
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    /// 20, primary key.
    pub order_id: String,
    /// 20: the parent Customer's `customer_id` when written as an ER child.
    pub customer_id: String,
    /// 20.
    pub employee_id: String,
    /// ms since the epoch: up to 7 days before `now`.
    pub order_date_ms: i64,
    /// Up to 20 days after `now`.
    pub required_date_ms: i64,
    /// Up to 5 days after `order_date`.
    pub shipped_date_ms: i64,
    /// 50: `"1"`..`"5"`.
    pub ship_via: String,
    /// Two decimals, `[0, 100)`.
    pub freight: f64,
    /// 50.
    pub ship_name: String,
    /// 100.
    pub ship_address: String,
    /// 50.
    pub ship_city: String,
    /// 10.
    pub ship_region: String,
    /// 10.
    pub ship_postal_code: String,
    /// 100.
    pub ship_country: String,
}

/// What a factory makes.
#[derive(Debug, Clone, PartialEq)]
pub enum Entity {
    /// A customer.
    Customer(Customer),
    /// An order.
    Order(Order),
}

impl Entity {
    /// Column name/value pairs in declaration order (the Redis hash fields, the SQL columns).
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        match self {
            Entity::Customer(c) => vec![
                ("customerId", c.customer_id.clone()),
                ("companyName", c.company_name.clone()),
                ("contactName", c.contact_name.clone()),
                ("contactTitle", c.contact_title.clone()),
                ("address", c.address.clone()),
                ("city", c.city.clone()),
                ("region", c.region.clone()),
                ("postalCode", c.postal_code.clone()),
                ("country", c.country.clone()),
                ("phone", c.phone.clone()),
                ("fax", c.fax.clone()),
            ],
            Entity::Order(o) => vec![
                ("orderId", o.order_id.clone()),
                ("customerId", o.customer_id.clone()),
                ("employeeId", o.employee_id.clone()),
                ("orderDate", o.order_date_ms.to_string()),
                ("requiredDate", o.required_date_ms.to_string()),
                ("shippedDate", o.shipped_date_ms.to_string()),
                ("shipVia", o.ship_via.clone()),
                ("freight", format!("{:.2}", o.freight)),
                ("shipName", o.ship_name.clone()),
                ("shipAddress", o.ship_address.clone()),
                ("shipCity", o.ship_city.clone()),
                ("shipRegion", o.ship_region.clone()),
                ("shipPostalCode", o.ship_postal_code.clone()),
                ("shipCountry", o.ship_country.clone()),
            ],
        }
    }
}

/// `DataObjectFactory.Entry`: a key and the entity stored under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key (`customerId` / `orderId`).
    pub key: String,
    /// The entity.
    pub value: Entity,
}

/// A Northwind factory: `createEntry` and `getKey` over a [`KeyFormat`].
#[derive(Debug, Clone)]
pub struct Factory {
    /// Customer or Order.
    pub kind: FactoryKind,
    /// Key formatting.
    pub key: KeyFormat,
    /// `now` for order dates, ms since the epoch (fixed by the caller for reproducibility).
    pub now_ms: i64,
}

const LAST_NAMES: &[&str] = &[
    "Anders",
    "Berglund",
    "Chang",
    "Dewey",
    "Eriksen",
    "Fonseca",
    "Gonzalez",
    "Hardy",
    "Ibsen",
    "Jablonski",
    "Koskitalo",
    "Labrune",
    "Moreno",
    "Nagy",
    "Ottlieb",
    "Pavarotti",
    "Quinn",
    "Rancé",
    "Saveley",
    "Tonini",
    "Urrutia",
    "Vaffe",
    "Wilson",
    "Yorres",
    "Zbyszek",
];
const COMPANY_WORDS: &[&str] = &[
    "Alfreds",
    "Blauer See",
    "Bon app'",
    "Chop-suey",
    "Du monde",
    "Ernst",
    "Folk och fä",
    "Frankenversand",
    "Galería",
    "Hanari",
    "Island",
    "Königlich",
    "La maison",
    "Lehmanns",
    "Magazzini",
    "Morgenstern",
    "North/South",
    "Océano",
    "Piccolo",
    "Queen",
    "Rattlesnake",
    "Save-a-lot",
    "Seven Seas",
    "Tortuga",
    "Vaffeljernet",
    "Wartian",
    "Wolski",
];
const COMPANY_SUFFIXES: &[&str] = &[
    "Futterkiste",
    "Delikatessen",
    "Imports",
    "Markets",
    "Trading",
    "Foods",
    "Restaurant",
    "Handel",
    "Herkku",
    "Canyon Grocery",
    "Bistro",
    "Comidas",
    "Stores",
    "and Sons",
    "LLC",
];
const TITLES: &[&str] = &[
    "Sales Representative",
    "Owner",
    "Order Administrator",
    "Marketing Manager",
    "Accounting Manager",
    "Sales Agent",
    "Sales Associate",
    "Marketing Assistant",
    "Sales Manager",
    "Assistant Sales Agent",
];
const STREETS: &[&str] = &[
    "Obere Str.",
    "Avda. de la Constitución",
    "Mataderos",
    "Hauptstr.",
    "Berguvsvägen",
    "Forsterstr.",
    "Place Kléber",
    "Gran Vía",
    "Rue des Bouchers",
    "Fauntleroy Circus",
    "Kirchgasse",
    "Walserweg",
    "Via Ludovico il Moro",
    "Rua Orós",
    "Maubelstr.",
];
/// (city, region, country, postal code pattern: `9` = digit, `A` = letter).
const PLACES: &[(&str, &str, &str, &str)] = &[
    ("Berlin", "", "Germany", "99999"),
    ("México D.F.", "", "Mexico", "99999"),
    ("London", "", "UK", "AA9 9AA"),
    ("Luleå", "", "Sweden", "999 99"),
    ("Mannheim", "", "Germany", "99999"),
    ("Strasbourg", "", "France", "99999"),
    ("Madrid", "", "Spain", "99999"),
    ("Marseille", "", "France", "99999"),
    ("Tsawassen", "BC", "Canada", "A9A 9A9"),
    ("Buenos Aires", "", "Argentina", "9999"),
    ("Bern", "", "Switzerland", "9999"),
    ("São Paulo", "SP", "Brazil", "99999-999"),
    ("Seattle", "WA", "USA", "99999"),
    ("Portland", "OR", "USA", "99999"),
    ("Anchorage", "AK", "USA", "99999"),
    ("Albuquerque", "NM", "USA", "99999"),
    ("Lander", "WY", "USA", "99999"),
    ("Cork", "Co. Cork", "Ireland", ""),
    ("Bergamo", "", "Italy", "99999"),
    ("Oulu", "", "Finland", "99999"),
];

const DAY_MS: i64 = 86_400_000;

impl Factory {
    /// A factory of `kind` with keys formatted by `key`; `now_ms` anchors order dates.
    pub fn new(kind: FactoryKind, key: KeyFormat, now_ms: i64) -> Self {
        Factory { kind, key, now_ms }
    }

    /// `getKey(idNum)`: the key entry `id` is stored under (when keys are not random).
    pub fn key_of(&self, id: i64) -> String {
        self.key.key(id)
    }

    /// `createEntry(idNum, erKey)`: a fake entity; its key is `getKey(id)` unless
    /// `factory.key.isRandom`, then a random id-number-like string. For an Order, `er_key`
    /// (the parent Customer's key) becomes its `customer_id`.
    pub fn create_entry(&self, id: i64, er_key: Option<&str>, rng: &mut JavaRandom) -> Entry {
        let key = if self.key.is_random {
            fake_id(rng)
        } else {
            self.key_of(id)
        };
        let (city, region, country, postal) =
            PLACES[rng.next_int_bound(PLACES.len() as i32) as usize];
        let address = format!("{} {}", rng.pick(STREETS), rng.next_int_bound(200) + 1);
        let company = format!("{} {}", rng.pick(COMPANY_WORDS), rng.pick(COMPANY_SUFFIXES));
        let postal_code = fill_pattern(postal, rng);
        let value = match self.kind {
            FactoryKind::Customer => Entity::Customer(Customer {
                customer_id: key.clone(),
                company_name: company,
                contact_name: rng.pick(LAST_NAMES).to_string(),
                contact_title: rng.pick(TITLES).to_string(),
                address: format!("{address}, {city}"),
                city: city.into(),
                region: region.into(),
                postal_code,
                country: country.into(),
                phone: fake_phone(rng),
                fax: fake_phone(rng),
            }),
            FactoryKind::Order => {
                let order_date_ms = self.now_ms - i64::from(rng.next_int_bound(7 * 24)) * 3_600_000;
                let required_date_ms =
                    self.now_ms + 1 + i64::from(rng.next_int_bound(20 * 24)) * 3_600_000;
                let shipped_date_ms =
                    order_date_ms + 1 + i64::from(rng.next_int_bound(5 * 24)) * 3_600_000;
                let customer_id = match er_key {
                    Some(parent) => parent.to_string(),
                    None => fake_id(rng),
                };
                Entity::Order(Order {
                    order_id: key.clone(),
                    customer_id,
                    employee_id: fake_id(rng),
                    order_date_ms,
                    required_date_ms,
                    shipped_date_ms,
                    ship_via: (rng.next_int_bound(5) + 1).to_string(),
                    // PadoGrid: Math.round(10000 * random) / 100d.
                    freight: (10000.0 * rng.next_double()).round() / 100.0,
                    ship_name: company,
                    ship_address: address,
                    ship_city: city.into(),
                    ship_region: region.into(),
                    ship_postal_code: postal_code,
                    ship_country: country.into(),
                })
            }
        };
        debug_assert!(order_days_ok(&value, DAY_MS));
        Entry { key, value }
    }
}

fn order_days_ok(e: &Entity, day: i64) -> bool {
    match e {
        Entity::Order(o) => {
            o.shipped_date_ms > o.order_date_ms && o.shipped_date_ms - o.order_date_ms <= 5 * day
        }
        Entity::Customer(_) => true,
    }
}

/// A Swedish-personnummer-like id (`YYMMDD-NNNN`, 11 characters) as javafaker's
/// `invalidSvSeSsn` makes: fits the 20-character id columns.
fn fake_id(rng: &mut JavaRandom) -> String {
    format!(
        "{:02}{:02}{:02}-{:04}",
        rng.next_int_bound(100),
        rng.next_int_bound(12) + 1,
        rng.next_int_bound(28) + 1,
        rng.next_int_bound(10000)
    )
}

fn fake_phone(rng: &mut JavaRandom) -> String {
    format!(
        "({:03}) {:03}-{:04}",
        rng.next_int_bound(900) + 100,
        rng.next_int_bound(900) + 100,
        rng.next_int_bound(10000)
    )
}

fn fill_pattern(pattern: &str, rng: &mut JavaRandom) -> String {
    let mut out = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        match c {
            '9' => {
                let _ = write!(out, "{}", rng.next_int_bound(10));
            }
            'A' => out.push((b'A' + rng.next_int_bound(26) as u8) as char),
            other => out.push(other),
        }
    }
    out
}

/// The ids of the ER children of the parent written at invocation `i` (reference §2.8):
/// `n` children (`maxKeys`, or uniform in `[1, maxKeys]` when random, drawn from the parent's
/// generator), with ids `i*maxKeys + 1 + k`, so no two parents share a child id.
pub fn er_child_ids(i: i64, max_keys: u32, is_random: bool, rng: &mut JavaRandom) -> Vec<i64> {
    let max = i64::from(max_keys.max(1));
    let n = if is_random {
        i64::from(rng.next_int_bound(max as i32)) + 1
    } else {
        max
    };
    (0..n).map(|k| i * max + 1 + k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_matches_the_jdk() {
        // new Random(1).nextInt(100) x5 and nextInt() from a JDK.
        let mut r = JavaRandom::new(1);
        let v: Vec<i32> = (0..5).map(|_| r.next_int_bound(100)).collect();
        assert_eq!(v, vec![85, 88, 47, 13, 54]);
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_int(), -1170105035);
        let mut r = JavaRandom::new(0);
        assert_eq!(r.next_long(), -4962768465676381896);
        let mut r = JavaRandom::new(1);
        assert_eq!(r.next_int_bound(16), 11); // power-of-two path
        let mut r = JavaRandom::new(1);
        assert_eq!(r.next_double(), 0.7308781907032909);
    }

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

    #[test]
    fn factory_class_names() {
        assert_eq!(
            FactoryKind::from_class("org.redis.demo.nw.impl.CustomerFactoryImpl"),
            Some(FactoryKind::Customer)
        );
        assert_eq!(
            FactoryKind::from_class("org.redisson.demo.nw.impl.OrderFactoryImpl"),
            Some(FactoryKind::Order)
        );
        assert_eq!(FactoryKind::from_class("com.acme.Foo"), None);
    }

    fn fixed_keys(prefix: &str) -> KeyFormat {
        KeyFormat {
            prefix: prefix.into(),
            length: 11,
            is_random: false,
            leading_zeros: true,
        }
    }

    #[test]
    fn keys_like_create_key() {
        assert_eq!(fixed_keys("000000-").key(0), "000000-0000");
        assert_eq!(fixed_keys("000000-").key(123), "000000-0123");
        let bare = KeyFormat {
            prefix: "k".into(),
            length: -1,
            is_random: false,
            leading_zeros: false,
        };
        assert_eq!(bare.key(7), "7");
        let plain = KeyFormat {
            prefix: "k".into(),
            length: 5,
            is_random: false,
            leading_zeros: false,
        };
        assert_eq!(plain.key(7), "k7");
    }

    #[test]
    fn er_orders_name_their_customer() {
        let customers = Factory::new(
            FactoryKind::Customer,
            fixed_keys("000000-"),
            1_700_000_000_000,
        );
        let orders = Factory::new(FactoryKind::Order, fixed_keys("000000-"), 1_700_000_000_000);
        let mut rng = JavaRandom::new(1);
        let mut customer_ids = Vec::new();
        let mut order_ids = Vec::new();
        for i in 0..50 {
            let c = customers.create_entry(i, None, &mut rng);
            assert_eq!(c.key, customers.key_of(i));
            let Entity::Customer(cust) = &c.value else {
                panic!("customer")
            };
            assert!(cust.company_name.chars().count() <= 50 && cust.postal_code.len() <= 10);
            for child in er_child_ids(i, 5, true, &mut rng) {
                let o = orders.create_entry(child, Some(&c.key), &mut rng);
                let Entity::Order(order) = &o.value else {
                    panic!("order")
                };
                assert_eq!(order.customer_id, c.key);
                assert!(order.freight >= 0.0 && order.freight < 100.0);
                assert!(order.shipped_date_ms > order.order_date_ms);
                order_ids.push(o.key);
            }
            customer_ids.push(c.key);
        }
        let mut unique = order_ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), order_ids.len(), "child ids never collide");
        assert!(order_ids.len() >= 50 && order_ids.len() <= 250);
        // Reproducible from the seed.
        let mut a = JavaRandom::new(9);
        let mut b = JavaRandom::new(9);
        assert_eq!(
            customers.create_entry(3, None, &mut a),
            customers.create_entry(3, None, &mut b)
        );
    }

    #[test]
    fn er_child_ids_fixed_count() {
        let mut rng = JavaRandom::new(1);
        assert_eq!(er_child_ids(2, 3, false, &mut rng), vec![7, 8, 9]);
    }
}
