//! How a target keeps core data ([`Layout`], `--layout`) and how the benchmarks reach it
//! ([`Via`], `--via`), and which combinations make sense for which [`TargetKind`].
//!
//! One flag names the layout for every store kind. A layout that a kind does not have is
//! skipped for that kind (the 2018 Mongo variants mean nothing to Redis), so
//! `--layout 2018,edgex` gives every target its 2018 column and, where EdgeX has one, its
//! current-EdgeX column:
//!
//! | `--layout` | Redis-protocol targets and the engine | PostgreSQL | SQLite | MongoDB |
//! |---|---|---|---|---|
//! | `2018` | the 2018 PoC's keys, msgpack | JSONB documents | JSON documents | readings inside their event |
//! | `2018-referenced` | — | — | — | readings in their own collection, one `$in` query per event list |
//! | `2018-exact` | — | — | — | readings in their own collection, one query per reading (the 2018 client) |
//! | `edgex3` | EdgeX 3.1's keys (`cd\|evt:<uuid>`, JSON) | — | — | — |
//! | `edgex4` | — | EdgeX 4.0's schema | EdgeX 4.0's schema, in SQLite | EdgeX 4.0's records as documents (EdgeX has no MongoDB layout) |
//! | `edgex` | `edgex3` | `edgex4` | `edgex4` | `edgex4` |
//!
//! `--via http` puts EdgeX's REST service in front of a store, in process, and runs the
//! benchmarks through it; the store behind a service is always in its EdgeX layout (the
//! service speaks EdgeX 3/4 data), so the kinds without one (the engine's typed API,
//! mini-redis) cannot be served.

use super::spec::TargetKind;

/// How a target's store lays out core data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// The 2018 PoC's layout of each store (MongoDB: readings embedded in their event).
    #[default]
    Y2018,
    /// MongoDB only: readings in their own collection, loaded with one `$in` query.
    Y2018Referenced,
    /// MongoDB only: readings in their own collection, one query per reading, as the 2018
    /// client did.
    Y2018Exact,
    /// EdgeX 3.1's Redis layout, on every Redis-protocol target and the engine.
    EdgeX3,
    /// EdgeX 4.0's PostgreSQL schema, on PostgreSQL and (ported) SQLite; EdgeX 4.0's records
    /// as documents on MongoDB.
    EdgeX4,
}

/// Every `--layout` name, for error messages.
pub const LAYOUT_NAMES: &str = "2018, 2018-referenced, 2018-exact, edgex3, edgex4, edgex";

impl Layout {
    /// Parses one `--layout` name; `edgex` stands for both current layouts.
    pub fn parse(name: &str) -> Option<&'static [Layout]> {
        Some(match name {
            "2018" => &[Layout::Y2018],
            "2018-referenced" => &[Layout::Y2018Referenced],
            "2018-exact" => &[Layout::Y2018Exact],
            "edgex3" => &[Layout::EdgeX3],
            "edgex4" => &[Layout::EdgeX4],
            "edgex" => &[Layout::EdgeX3, Layout::EdgeX4],
            _ => return None,
        })
    }

    /// The name `--layout` takes.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Y2018 => "2018",
            Layout::Y2018Referenced => "2018-referenced",
            Layout::Y2018Exact => "2018-exact",
            Layout::EdgeX3 => "edgex3",
            Layout::EdgeX4 => "edgex4",
        }
    }

    /// What the column name gets appended: nothing for the 2018 layout, so the 2018 columns
    /// keep the PoC's names.
    pub fn column_suffix(self) -> &'static str {
        match self {
            Layout::Y2018 => "",
            Layout::Y2018Referenced => "_Referenced",
            Layout::Y2018Exact => "_Referenced2018",
            Layout::EdgeX3 => "_EdgeX3",
            Layout::EdgeX4 => "_EdgeX4",
        }
    }

    /// Whether a target of `kind` can keep its data in this layout.
    pub fn applies_to(self, kind: &TargetKind) -> bool {
        match self {
            Layout::Y2018 => !matches!(kind, TargetKind::Service(_)),
            Layout::Y2018Referenced | Layout::Y2018Exact => {
                matches!(kind, TargetKind::Mongo { .. })
            }
            Layout::EdgeX3 => speaks_redis(kind),
            Layout::EdgeX4 => matches!(
                kind,
                TargetKind::Postgres(_) | TargetKind::Sqlite(_) | TargetKind::Mongo { .. }
            ),
        }
    }

    /// Whether this is one of EdgeX's current layouts (the ones the service can sit on).
    pub fn is_edgex(self) -> bool {
        matches!(self, Layout::EdgeX3 | Layout::EdgeX4)
    }

    /// The current EdgeX layout of `kind`, if it has one.
    pub fn edgex_of(kind: &TargetKind) -> Option<Layout> {
        [Layout::EdgeX3, Layout::EdgeX4]
            .into_iter()
            .find(|l| l.applies_to(kind))
    }
}

/// Redis-protocol targets that take every command the EdgeX 3.1 layout sends (mini-redis
/// takes GET and SET only; the typed-API engine column has no command path).
/// Why a target kind has no EdgeX layout, and what to run instead, when that has an answer
/// worth more than the list of layouts: the two kinds that speak to the engine or to Redis
/// and still keep no EdgeX data.
pub fn no_edgex_layout(kind: &TargetKind) -> Option<&'static str> {
    match kind {
        TargetKind::EmbeddedDirect => Some(
            "embedded-direct is the engine's typed API, which has the 2018 layout only, so it has \
             no EdgeX layout to run or serve: use --target embedded, the same engine through \
             redis-rs, which has EdgeX 3.1's (edgex3)",
        ),
        TargetKind::MiniRedis => Some(
            "mini-redis takes only GET and SET, so it has no EdgeX layout: use --target embedded, \
             redis-tcp or redis-uds",
        ),
        _ => None,
    }
}

fn speaks_redis(kind: &TargetKind) -> bool {
    matches!(
        kind,
        TargetKind::SpawnRedisTcp
            | TargetKind::SpawnRedisUds
            | TargetKind::Redis(_)
            | TargetKind::Embedded
            | TargetKind::EmbeddedTcp
            | TargetKind::EmbeddedUds
            | TargetKind::SpawnCluster(_)
            | TargetKind::Cluster(_)
    )
}

/// How the benchmarks reach a target's store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Via {
    /// Store calls, directly.
    #[default]
    Direct,
    /// Through edgebench's core-data service over TCP (in this process).
    HttpTcp,
    /// Through edgebench's core-data service over a Unix socket (in this process).
    HttpUds,
}

/// Every `--via` name, for error messages.
pub const VIA_NAMES: &str = "direct, http, http-tcp, http-uds";

impl Via {
    /// Parses one `--via` name; `http` stands for both transports.
    pub fn parse(name: &str) -> Option<&'static [Via]> {
        Some(match name {
            "direct" => &[Via::Direct],
            "http" => &[Via::HttpTcp, Via::HttpUds],
            "http-tcp" => &[Via::HttpTcp],
            "http-uds" => &[Via::HttpUds],
            _ => return None,
        })
    }

    /// What the column name gets appended: `+HTTP_TCP`, `+HTTP_UDS`.
    pub fn column_suffix(self) -> &'static str {
        match self {
            Via::Direct => "",
            Via::HttpTcp => "+HTTP_TCP",
            Via::HttpUds => "+HTTP_UDS",
        }
    }

    /// Whether this goes through the service.
    pub fn is_http(self) -> bool {
        self != Via::Direct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::postgres::PgTransport;
    use crate::target::{PgAt, SqliteAt};

    #[test]
    fn each_layout_applies_to_the_kinds_that_have_it() {
        let pg = TargetKind::Postgres(PgAt::Env(PgTransport::Uds));
        let sqlite = TargetKind::Sqlite(SqliteAt::Temp);
        assert_eq!(
            Layout::edgex_of(&TargetKind::SpawnRedisUds),
            Some(Layout::EdgeX3)
        );
        assert_eq!(
            Layout::edgex_of(&TargetKind::Embedded),
            Some(Layout::EdgeX3)
        );
        assert_eq!(Layout::edgex_of(&TargetKind::EmbeddedDirect), None);
        assert_eq!(Layout::edgex_of(&TargetKind::MiniRedis), None);
        assert_eq!(Layout::edgex_of(&pg), Some(Layout::EdgeX4));
        assert_eq!(Layout::edgex_of(&sqlite), Some(Layout::EdgeX4));
        let mongo = TargetKind::Mongo {
            url: "mongodb://127.0.0.1:27017".to_string(),
            layout: crate::store::mongo::MongoLayout::Embedded,
            fidelity: crate::store::mongo::Fidelity::Modern,
        };
        assert_eq!(Layout::edgex_of(&mongo), Some(Layout::EdgeX4));
        assert!(!Layout::EdgeX3.applies_to(&mongo));
        assert!(!Layout::Y2018Referenced.applies_to(&pg));
        assert_eq!(
            Layout::parse("edgex"),
            Some(&[Layout::EdgeX3, Layout::EdgeX4][..])
        );
        assert_eq!(Layout::parse("EdgeX"), None);
        assert_eq!(Via::parse("http"), Some(&[Via::HttpTcp, Via::HttpUds][..]));
    }
}
