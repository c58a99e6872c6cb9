//! MongoDB as a target: a private database on the server a `mongodb://` URL names, made for
//! the run in one of the 2018 layouts (readings embedded or referenced, with the 2018
//! client's fidelity or not) or as EdgeX 4.0's records, and dropped when the target drops.

use std::sync::Arc;

use super::edgex4::{Mongo4Database, Mongo4Store};
use super::{Fidelity, MongoDatabase, MongoLayout, MongoStore};
use crate::store::backend::{
    no_wait, Backend, BackendError, Database, InLayout, Kind, ParseError, Started,
};
use crate::store::layout::Layout;
use crate::store::ycsb::{Binding, Setup, YcsbOpener};
use crate::store::StoreResult;

/// MongoDB's `--target` item: `mongodb://HOST:PORT[,HOST:PORT…][/…]`.
pub struct MongoBackend;

/// A MongoDB server at its `mongodb://` URL (column `MongoDB`, the seed's document-store
/// column was `BenchmarkMongoDB`); which of its layouts the run makes is the target's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MongoKind {
    /// The `mongodb://` URL.
    pub url: String,
}

impl Backend for MongoBackend {
    fn forms(&self) -> &'static str {
        "mongodb://HOST:PORT"
    }

    fn urls(&self) -> &'static str {
        "mongodb://HOST:PORT"
    }

    fn parse(&self, what: &str) -> Option<Result<Arc<dyn Kind>, ParseError>> {
        let (scheme, rest) = what.split_once("://")?;
        if scheme.eq_ignore_ascii_case("mongodb+srv") {
            return Some(Err(ParseError::BadUrl(
                "mongodb+srv:// needs DNS SRV lookups, which this build leaves out: give the \
                 hosts as mongodb://HOST:PORT[,HOST:PORT]"
                    .to_string(),
            )));
        }
        if !scheme.eq_ignore_ascii_case("mongodb") {
            return None;
        }
        if rest.trim_end_matches('/').is_empty() {
            return Some(Err(ParseError::BadUrl(
                "expected mongodb://HOST:PORT".to_string(),
            )));
        }
        Some(Ok(Arc::new(MongoKind {
            url: what.to_string(),
        })))
    }
}

impl MongoKind {
    /// Whether the URL asks for TLS (`tls=true` or its older name `ssl=true`, as the
    /// driver reads them: names and values in any case).
    pub fn uses_tls(&self) -> bool {
        let Some((_, query)) = self.url.split_once('?') else {
            return false;
        };
        query.split('&').any(|pair| {
            pair.split_once('=').is_some_and(|(k, v)| {
                (k.eq_ignore_ascii_case("tls") || k.eq_ignore_ascii_case("ssl"))
                    && v.eq_ignore_ascii_case("true")
            })
        })
    }
}

impl Kind for MongoKind {
    /// `MongoDB`, or `MongoDB+TLS` when the URL asks for TLS.
    fn column(&self) -> String {
        if self.uses_tls() {
            "MongoDB+TLS".to_string()
        } else {
            "MongoDB".to_string()
        }
    }

    fn layouts(&self) -> &'static [Layout] {
        &[
            Layout::Y2018,
            Layout::Y2018Referenced,
            Layout::Y2018Exact,
            Layout::EdgeX4,
        ]
    }

    fn ycsb_bindings(&self) -> &'static [Binding] {
        &[Binding::MongoDb]
    }

    fn start(&self, layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError> {
        no_wait(wait)?;
        let (v2018, fidelity) = match layout {
            Layout::Y2018Referenced => (MongoLayout::Referenced, Fidelity::Modern),
            Layout::Y2018Exact => (MongoLayout::Referenced, Fidelity::Y2018),
            _ => (MongoLayout::Embedded, Fidelity::Modern),
        };
        Ok(Box::new(start(
            &self.url,
            v2018,
            fidelity,
            layout == Layout::EdgeX4,
        )?))
    }
}

/// A MongoDB target's private database, in the layout it was made for.
pub type MongoTarget = InLayout<MongoDatabase, Mongo4Database>;

/// Creates the private database at `url`: EdgeX 4.0's records (`edgex4`), or the 2018 layout
/// `layout` with `fidelity`.
pub fn start(
    url: &str,
    layout: MongoLayout,
    fidelity: Fidelity,
    edgex4: bool,
) -> Result<MongoTarget, BackendError> {
    Ok(match edgex4 {
        false => InLayout::V2018(Box::new(MongoDatabase::create(url, layout, fidelity)?)),
        true => InLayout::EdgeX4(Arc::new(Mongo4Database::create(url)?)),
    })
}

impl Database for MongoDatabase {
    type Store = MongoStore;
    fn open(&self) -> StoreResult<MongoStore> {
        self.open_store()
    }
    fn describe(&self) -> String {
        format!("mongodb {}", MongoDatabase::describe(self))
    }
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        super::ycsb::opener(self.client(), self.name(), setup)
    }
}

impl Database for Mongo4Database {
    type Store = Mongo4Store;
    fn open(&self) -> StoreResult<Mongo4Store> {
        self.open_store()
    }
    fn describe(&self) -> String {
        Mongo4Database::describe(self)
    }
    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        super::ycsb::opener(self.client(), self.name(), setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_says_tls_when_the_url_asks_for_it() {
        let column = |url: &str| {
            MongoKind {
                url: url.to_string(),
            }
            .column()
        };
        assert_eq!(column("mongodb://h:27017"), "MongoDB");
        assert_eq!(column("mongodb://h/?tls=false"), "MongoDB");
        assert_eq!(
            column("mongodb://h/?tls=true&tlsCAFile=/ca.crt"),
            "MongoDB+TLS"
        );
        assert_eq!(column("mongodb://h/?appName=x&SSL=TRUE"), "MongoDB+TLS");
    }
}
