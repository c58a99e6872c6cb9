//! How the benchmarks reach a target's store ([`Via`], `--via`), beside how it keeps core data
//! ([`Layout`], `--layout`, which each backend answers for itself).
//!
//! `--via http` puts EdgeX's REST service in front of a store, in process, and runs the
//! benchmarks through it; the store behind a service is always in its EdgeX layout (the
//! service speaks EdgeX 3/4 data), so the kinds without one (the engine's typed API,
//! mini-redis) cannot be served.

pub use crate::store::layout::{Layout, LAYOUT_NAMES};

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
    /// Published on a message bus, as EdgeX's device services do, and persisted by
    /// edgebench's core-data subscriber (in this process); the bus is the spec's
    /// [`super::TargetSpec::bus`].
    Bus,
}

/// Every `--via` name, for error messages.
/// (`fleet` also takes `bus`, and says so in its own message.)
pub const VIA_NAMES: &str = "direct, http, http-tcp, http-uds";

impl Via {
    /// Parses one `--via` name; `http` stands for both transports.
    pub fn parse(name: &str) -> Option<&'static [Via]> {
        Some(match name {
            "direct" => &[Via::Direct],
            "http" => &[Via::HttpTcp, Via::HttpUds],
            "http-tcp" => &[Via::HttpTcp],
            "http-uds" => &[Via::HttpUds],
            "bus" => &[Via::Bus],
            _ => return None,
        })
    }

    /// What the column name gets appended: `+HTTP_TCP`, `+HTTP_UDS` (a bus's column is
    /// named after its bus, [`super::bused::BusChoice::column_suffix`]).
    pub fn column_suffix(self) -> &'static str {
        match self {
            Via::Direct | Via::Bus => "",
            Via::HttpTcp => "+HTTP_TCP",
            Via::HttpUds => "+HTTP_UDS",
        }
    }

    /// Whether this goes through the service.
    pub fn is_http(self) -> bool {
        matches!(self, Via::HttpTcp | Via::HttpUds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::parse_targets;

    #[test]
    fn each_kind_names_its_edgex_layout() {
        let specs = parse_targets(&[
            "redis-uds,embedded,embedded-direct,mini-redis,pg-uds,sqlite,mongodb://h:1,\
             http://h:1"
                .to_string(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let edgex: Vec<_> = specs.iter().map(|s| s.edgex_layout()).collect();
        assert_eq!(
            edgex,
            [
                Some(Layout::EdgeX3),
                Some(Layout::EdgeX3),
                None,
                None,
                Some(Layout::EdgeX4),
                Some(Layout::EdgeX4),
                Some(Layout::EdgeX4),
                None,
            ]
        );
        let [redis, .., pg, _, mongo, service] = &specs[..] else {
            panic!("{specs:?}");
        };
        assert!(!mongo.has_layout(Layout::EdgeX3));
        assert!(mongo.has_layout(Layout::Y2018Exact));
        assert!(!pg.has_layout(Layout::Y2018Referenced));
        assert!(redis.has_layout(Layout::Y2018));
        assert!(!service.has_layout(Layout::Y2018));
        assert_eq!(
            Layout::parse("edgex"),
            Some(&[Layout::EdgeX3, Layout::EdgeX4][..])
        );
        assert_eq!(Layout::parse("EdgeX"), None);
        assert_eq!(Via::parse("http"), Some(&[Via::HttpTcp, Via::HttpUds][..]));
    }
}
