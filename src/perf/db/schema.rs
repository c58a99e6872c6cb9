//! The tables `-db` writes and their SQL: PadoGrid's `customers`/`orders` columns and lengths
//! (reference §4.4) as constants, an entity as typed column values ([`SqlValue`]) and back,
//! and the statements each dialect needs (create, upsert, select, `IN` lists).
//!
//! Invariants: statement text holds only table and column names from the constants here, and
//! placeholders — values always travel as parameters; an upsert updates every column but the
//! key and `created_on`; [`values_of`] and [`entity_of`] round-trip in column order.

use chrono::{DateTime, NaiveDateTime};

use crate::perf::factory::{Customer, Entity, FactoryKind, Order};

/// A table's columns: SQL type and length as PadoGrid's JPA entities declare them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Col {
    /// `varchar(n)`.
    Text(u32),
    /// `java.util.Date` / `LocalDateTime`: `timestamp` (PostgreSQL), `datetime(6)` (MySQL).
    Time,
    /// `double`.
    Double,
}

pub(super) struct TableDef {
    pub(super) name: &'static str,
    pub(super) columns: &'static [(&'static str, Col)],
}

/// `Customer` (§4.4); the first column is the `@Id`.
pub(super) const CUSTOMERS: TableDef = TableDef {
    name: "customers",
    columns: &[
        ("customerId", Col::Text(20)),
        ("companyName", Col::Text(50)),
        ("contactName", Col::Text(50)),
        ("contactTitle", Col::Text(50)),
        ("address", Col::Text(100)),
        ("city", Col::Text(50)),
        ("region", Col::Text(10)),
        ("postalCode", Col::Text(10)),
        ("country", Col::Text(100)),
        ("phone", Col::Text(30)),
        ("fax", Col::Text(30)),
    ],
};

/// `Order` (§4.4).
pub(super) const ORDERS: TableDef = TableDef {
    name: "orders",
    columns: &[
        ("orderId", Col::Text(20)),
        ("customerId", Col::Text(20)),
        ("employeeId", Col::Text(20)),
        ("orderDate", Col::Time),
        ("requiredDate", Col::Time),
        ("shippedDate", Col::Time),
        ("shipVia", Col::Text(50)),
        ("freight", Col::Double),
        ("shipName", Col::Text(50)),
        ("shipAddress", Col::Text(100)),
        ("shipCity", Col::Text(50)),
        ("shipRegion", Col::Text(10)),
        ("shipPostalCode", Col::Text(10)),
        ("shipCountry", Col::Text(100)),
    ],
};

/// `BaseEntity`'s timestamps, after the entity's own columns.
pub(super) const STAMPS: [&str; 2] = ["created_on", "updated_on"];

pub(super) fn table_def(kind: FactoryKind) -> &'static TableDef {
    match kind {
        FactoryKind::Customer => &CUSTOMERS,
        FactoryKind::Order => &ORDERS,
    }
}

/// A column value, typed.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum SqlValue {
    Text(String),
    Time(NaiveDateTime),
    Double(f64),
}

pub(super) fn time_of(ms: i64) -> NaiveDateTime {
    DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .naive_utc()
}

pub(super) fn ms_of(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_millis()
}

/// An entity's values in its table's column order.
pub(super) fn values_of(e: &Entity) -> Vec<SqlValue> {
    use SqlValue::{Double, Text, Time};
    match e {
        Entity::Customer(c) => [
            &c.customer_id,
            &c.company_name,
            &c.contact_name,
            &c.contact_title,
            &c.address,
            &c.city,
            &c.region,
            &c.postal_code,
            &c.country,
            &c.phone,
            &c.fax,
        ]
        .into_iter()
        .map(|s| Text(s.clone()))
        .collect(),
        Entity::Order(o) => vec![
            Text(o.order_id.clone()),
            Text(o.customer_id.clone()),
            Text(o.employee_id.clone()),
            Time(time_of(o.order_date_ms)),
            Time(time_of(o.required_date_ms)),
            Time(time_of(o.shipped_date_ms)),
            Text(o.ship_via.clone()),
            Double(o.freight),
            Text(o.ship_name.clone()),
            Text(o.ship_address.clone()),
            Text(o.ship_city.clone()),
            Text(o.ship_region.clone()),
            Text(o.ship_postal_code.clone()),
            Text(o.ship_country.clone()),
        ],
    }
}

/// The entity a row holds (NULLs read as empty / zero: rows we write have none).
pub(super) fn entity_of(kind: FactoryKind, values: Vec<SqlValue>) -> Entity {
    let mut it = values.into_iter();
    let mut text = || match it.next() {
        Some(SqlValue::Text(s)) => s,
        _ => String::new(),
    };
    match kind {
        FactoryKind::Customer => Entity::Customer(Customer {
            customer_id: text(),
            company_name: text(),
            contact_name: text(),
            contact_title: text(),
            address: text(),
            city: text(),
            region: text(),
            postal_code: text(),
            country: text(),
            phone: text(),
            fax: text(),
        }),
        FactoryKind::Order => {
            let v: Vec<SqlValue> = it.collect();
            let s = |i: usize| match v.get(i) {
                Some(SqlValue::Text(s)) => s.clone(),
                _ => String::new(),
            };
            let t = |i: usize| match v.get(i) {
                Some(SqlValue::Time(t)) => ms_of(*t),
                _ => 0,
            };
            Entity::Order(Order {
                order_id: s(0),
                customer_id: s(1),
                employee_id: s(2),
                order_date_ms: t(3),
                required_date_ms: t(4),
                shipped_date_ms: t(5),
                ship_via: s(6),
                freight: match v.get(7) {
                    Some(SqlValue::Double(d)) => *d,
                    _ => 0.0,
                },
                ship_name: s(8),
                ship_address: s(9),
                ship_city: s(10),
                ship_region: s(11),
                ship_postal_code: s(12),
                ship_country: s(13),
            })
        }
    }
}

/// The two SQL dialects: placeholders, types and the upsert clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Postgres,
    MySql,
}

impl Dialect {
    pub(super) fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::Postgres => format!("${n}"),
            Dialect::MySql => "?".into(),
        }
    }

    pub(super) fn placeholders(self, from: usize, count: usize) -> String {
        (from..from + count)
            .map(|n| self.placeholder(n))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn create_table(self, t: &TableDef) -> String {
        let (time, double, tail) = match self {
            Dialect::Postgres => ("timestamp", "double precision", ""),
            Dialect::MySql => ("datetime(6)", "double", " DEFAULT CHARSET=utf8mb4"),
        };
        let mut cols: Vec<String> = t
            .columns
            .iter()
            .enumerate()
            .map(|(i, (name, col))| {
                let ty = match col {
                    Col::Text(n) => format!("varchar({n})"),
                    Col::Time => time.to_string(),
                    Col::Double => double.to_string(),
                };
                if i == 0 {
                    format!("{name} {ty} NOT NULL PRIMARY KEY")
                } else {
                    format!("{name} {ty}")
                }
            })
            .collect();
        cols.extend(STAMPS.iter().map(|s| format!("{s} {time}")));
        format!(
            "CREATE TABLE IF NOT EXISTS {} ({}){tail}",
            t.name,
            cols.join(", ")
        )
    }

    /// Insert, or on a key conflict update every column but the key and `created_on`.
    pub(super) fn upsert(self, t: &TableDef) -> String {
        let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).chain(STAMPS).collect();
        let key = names[0];
        let updated: Vec<&str> = names[1..]
            .iter()
            .copied()
            .filter(|n| *n != "created_on")
            .collect();
        let insert = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            t.name,
            names.join(", "),
            self.placeholders(1, names.len())
        );
        match self {
            Dialect::Postgres => format!(
                "{insert} ON CONFLICT ({key}) DO UPDATE SET {}",
                updated
                    .iter()
                    .map(|n| format!("{n} = EXCLUDED.{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Dialect::MySql => format!(
                "{insert} ON DUPLICATE KEY UPDATE {}",
                updated
                    .iter()
                    .map(|n| format!("{n} = VALUES({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    pub(super) fn select(self, t: &TableDef) -> String {
        let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
        format!("SELECT {} FROM {}", names.join(", "), t.name)
    }

    /// `WHERE key IN (…)` for `n` keys.
    pub(super) fn key_in(self, t: &TableDef, n: usize) -> String {
        format!("WHERE {} IN ({})", t.columns[0].0, self.placeholders(1, n))
    }

    pub(super) fn table_exists(self) -> &'static str {
        match self {
            Dialect::Postgres => {
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = $1"
            }
            Dialect::MySql => {
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = ?"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::factory::{Factory, KeyFormat};
    use crate::perf::random::JavaRandom;

    #[test]
    fn upsert_sql_keeps_created_on_and_uses_each_dialect() {
        let pg = Dialect::Postgres.upsert(&CUSTOMERS);
        assert!(pg.starts_with("INSERT INTO customers (customerId, companyName,"));
        assert!(pg.contains(
            "$13) ON CONFLICT (customerId) DO UPDATE SET companyName = EXCLUDED.companyName"
        ));
        assert!(pg.ends_with("fax = EXCLUDED.fax, updated_on = EXCLUDED.updated_on"));
        assert!(!pg.contains("created_on = "));
        let my = Dialect::MySql.upsert(&ORDERS);
        assert_eq!(my.matches('?').count(), 16);
        assert!(my.contains("ON DUPLICATE KEY UPDATE customerId = VALUES(customerId)"));
        assert!(!my.contains("created_on = "));
    }

    #[test]
    fn create_table_has_padogrid_columns_and_lengths() {
        let pg = Dialect::Postgres.create_table(&ORDERS);
        assert_eq!(
            pg,
            "CREATE TABLE IF NOT EXISTS orders (orderId varchar(20) NOT NULL PRIMARY KEY, \
             customerId varchar(20), employeeId varchar(20), orderDate timestamp, \
             requiredDate timestamp, shippedDate timestamp, shipVia varchar(50), \
             freight double precision, shipName varchar(50), shipAddress varchar(100), \
             shipCity varchar(50), shipRegion varchar(10), shipPostalCode varchar(10), \
             shipCountry varchar(100), created_on timestamp, updated_on timestamp)"
        );
        let my = Dialect::MySql.create_table(&CUSTOMERS);
        assert!(my.contains("customerId varchar(20) NOT NULL PRIMARY KEY, companyName varchar(50)"));
        assert!(
            my.ends_with("created_on datetime(6), updated_on datetime(6)) DEFAULT CHARSET=utf8mb4")
        );
    }

    #[test]
    fn values_round_trip_through_the_column_order() {
        let f = Factory::new(
            FactoryKind::Order,
            KeyFormat {
                prefix: "o".into(),
                length: 6,
                is_random: false,
                leading_zeros: true,
            },
            1_700_000_000_123,
        );
        let e = f.create_entry(7, Some("c1"), &mut JavaRandom::new(3));
        assert_eq!(entity_of(FactoryKind::Order, values_of(&e.value)), e.value);
        assert_eq!(values_of(&e.value).len(), ORDERS.columns.len());
    }
}
