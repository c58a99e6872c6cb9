//! The Northwind data-object factories of `test_group` (reference §4.2–4.4) and [`Writer`],
//! what one operation writes with them: its entity, then its one-to-many ER children (§2.8).
//! The Redis runner (`run`) and the `-db` runner (`db`) both write through a [`Writer`].
//!
//! [`FactoryKind`] and [`KeyFormat`] are re-exported here, with the factories that use them,
//! but defined in `config`: they are what `<op>.factory.class` and `<op>.factory.key.*` parse
//! to, and [`Writer::new`] reads a [`GroupTestConfig`], so defining them here would make
//! `config` and `factory` import each other.
//!
//! Invariants:
//! - A Northwind child (Order) created for a parent (Customer) carries the parent's key in
//!   `customer_id`, so every Order names an existing Customer.
//! - Fake values come from small built-in word lists; they look like Northwind rows and
//!   respect the column lengths of reference §4.4.
//! - Every entity a [`Writer`] makes is generated from a generator seeded by its operation's
//!   `randomSeed` and its own id, never from shared state, so what a run writes depends only
//!   on the configuration (and the `now` order dates are anchored to).

use std::fmt::Write as _;

use super::config::{ErConfig, GroupTestConfig};
pub use super::config::{FactoryKind, KeyFormat};
use super::random::JavaRandom;

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

/// A generator for one entity: seeded by its operation's `randomSeed` and its id, so an
/// entity is the same whichever thread, run or order writes it (splitmix64 mixing, so
/// neighbouring ids do not get correlated `java.util.Random` streams).
fn entity_rng(seed: i64, id: i64) -> JavaRandom {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    JavaRandom::new(mix(seed as u64 ^ mix(id as u64)) as i64)
}

/// The ER child side of a [`Writer`].
struct ChildWriter {
    factory: Factory,
    seed: i64,
    er: ErConfig,
}

/// What one operation writes: its factory, and its ER children's.
pub struct Writer {
    parent: Factory,
    seed: i64,
    start_num: i64,
    child: Option<ChildWriter>,
}

impl Writer {
    /// The writer of operation `op` (None without a factory); `now_ms` anchors order dates.
    pub fn new(cfg: &GroupTestConfig, op: &str, now_ms: i64) -> Option<Writer> {
        let op = cfg.operations.get(op)?;
        let f = op.factory.as_ref()?;
        let child = f.er.as_ref().and_then(|er| {
            let c = cfg.operations.get(&er.operation)?;
            let cf = c.factory.as_ref()?;
            Some(ChildWriter {
                factory: Factory::new(cf.kind, cf.key.clone(), now_ms),
                seed: c.random_seed,
                er: er.clone(),
            })
        });
        Some(Writer {
            parent: Factory::new(f.kind, f.key.clone(), now_ms),
            seed: op.random_seed,
            start_num: op.key_start_num,
            child,
        })
    }

    /// The rows written for entity id `id` (`startNum + n` for the n-th entry, 0-based): the
    /// entity, then its ER children, ids `e*maxKeys + 1 + k` with `e` the entry's 1-based
    /// number (§2.8, `e` = the invocation number for `put`), each naming the parent's key.
    pub fn rows(&self, id: i64) -> Vec<(FactoryKind, Entry)> {
        let mut rng = entity_rng(self.seed, id);
        let parent = self.parent.create_entry(id, None, &mut rng);
        let mut out = Vec::with_capacity(1);
        if let Some(c) = &self.child {
            let e = id - self.start_num + 1;
            for child_id in er_child_ids(e, c.er.max_keys, c.er.is_random, &mut rng) {
                let mut crng = entity_rng(c.seed, child_id);
                let entry = c
                    .factory
                    .create_entry(child_id, Some(&parent.key), &mut crng);
                out.push((c.factory.kind, entry));
            }
        }
        out.insert(0, (self.parent.kind, parent));
        out
    }

    /// The key of entity id `id` (`getKey`).
    pub fn key(&self, id: i64) -> String {
        self.parent.key_of(id)
    }

    /// The parent's table.
    pub fn kind(&self) -> FactoryKind {
        self.parent.kind
    }

    /// The tables this writes: the parent's, then its ER children's.
    pub fn kinds(&self) -> impl Iterator<Item = FactoryKind> {
        std::iter::once(self.parent.kind).chain(self.child.as_ref().map(|c| c.factory.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
