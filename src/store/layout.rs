//! How a store lays out core data: the one `--layout` word every backend answers to.
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
//! Each backend says which layouts it has ([`super::backend::Kind::layouts`]).

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

    /// Whether this is one of EdgeX's current layouts (the ones the service can sit on).
    pub fn is_edgex(self) -> bool {
        matches!(self, Layout::EdgeX3 | Layout::EdgeX4)
    }
}
