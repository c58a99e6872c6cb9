//! Which `/api/v3` route answers a store call: the list, count and delete routes for each
//! [`Filter`] and [`Doomed`], and the percent-encoding of names in paths.
//!
//! EdgeX has a list route for every reading filter, but for events only "all", "by device" and
//! "by time range": events by device and time range have no route and are
//! [`StoreError::Unsupported`]. Count routes exist only for "all" and "by device"; any other
//! count is the `totalCount` of the matching list route. No route deletes one device's events
//! from one source ([`Doomed::Source`], EdgeX 4.0's retention, which core-data runs inside):
//! [`StoreError::Unsupported`] too.

use crate::store::edgex::{Doomed, Filter};
use crate::store::{StoreError, StoreResult};

/// The path prefix of every route.
pub const API: &str = "/api/v3";

/// Events by device and time range: EdgeX has no such route.
const NO_EVENT_ROUTE: &str =
    "EdgeX's API has no route for events by device and time range (only all, by device, or by \
     time range)";

/// The list route of the events `filter` covers (without the query string).
pub fn events(filter: Filter<'_>) -> StoreResult<String> {
    match (filter.device, filter.range) {
        (None, None) => Ok(format!("{API}/event/all")),
        (Some(d), None) => Ok(format!("{API}/event/device/name/{}", encode(d))),
        (None, Some((s, e))) => Ok(format!("{API}/event/start/{s}/end/{e}")),
        (Some(_), Some(_)) => Err(StoreError::Unsupported(NO_EVENT_ROUTE)),
    }
}

/// The count route of the events `filter` covers, or `None` when only a list route's
/// `totalCount` answers it.
pub fn event_count(filter: Filter<'_>) -> StoreResult<Option<String>> {
    match (filter.device, filter.range) {
        (None, None) => Ok(Some(format!("{API}/event/count"))),
        (Some(d), None) => Ok(Some(format!("{API}/event/count/device/name/{}", encode(d)))),
        (None, Some(_)) => Ok(None),
        (Some(_), Some(_)) => Err(StoreError::Unsupported(NO_EVENT_ROUTE)),
    }
}

/// The list route of the readings `filter` covers: every combination has one.
pub fn readings(filter: Filter<'_>) -> String {
    let device = filter.device.map(encode);
    let resource = filter.resource.map(encode);
    let range = filter.range.map(|(s, e)| format!("start/{s}/end/{e}"));
    let tail = match (device, resource, range) {
        (None, None, None) => "all".to_string(),
        (Some(d), None, None) => format!("device/name/{d}"),
        (None, Some(r), None) => format!("resourceName/{r}"),
        (Some(d), Some(r), None) => format!("device/name/{d}/resourceName/{r}"),
        (None, None, Some(t)) => t,
        (None, Some(r), Some(t)) => format!("resourceName/{r}/{t}"),
        (Some(d), Some(r), Some(t)) => format!("device/name/{d}/resourceName/{r}/{t}"),
        (Some(d), None, Some(t)) => format!("device/name/{d}/{t}"),
    };
    format!("{API}/reading/{tail}")
}

/// The count route of the readings `filter` covers, or `None` when only a list route's
/// `totalCount` answers it.
pub fn reading_count(filter: Filter<'_>) -> Option<String> {
    match (filter.device, filter.resource, filter.range) {
        (None, None, None) => Some(format!("{API}/reading/count")),
        (Some(d), None, None) => Some(format!("{API}/reading/count/device/name/{}", encode(d))),
        _ => None,
    }
}

/// A delete by device and source: EdgeX has no such route.
const NO_SOURCE_DELETE: &str =
    "EdgeX's API has no route to delete one device's events from one source (its retention \
     runs inside core-data: give the service --retention-interval and --retention edgex4, \
     or reach the store directly)";

/// The delete route of `doomed`.
pub fn delete_events(doomed: Doomed<'_>) -> StoreResult<String> {
    match doomed {
        Doomed::Device(d) => Ok(format!("{API}/event/device/name/{}", encode(d))),
        Doomed::OlderThan { age_ns } => Ok(format!("{API}/event/age/{age_ns}")),
        Doomed::Source { .. } => Err(StoreError::Unsupported(NO_SOURCE_DELETE)),
    }
}

/// The add route of an event sent by `service`.
pub fn add_event(service: &str, profile: &str, device: &str, source: &str) -> String {
    format!(
        "{API}/event/{}/{}/{}/{}",
        encode(service),
        encode(profile),
        encode(device),
        encode(source)
    )
}

/// The by-id route.
pub fn event_by_id(id: &str) -> String {
    format!("{API}/event/id/{}", encode(id))
}

/// Percent-encodes a path segment: everything but RFC 3986's unreserved characters.
pub fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_map_to_edgex_routes() {
        assert_eq!(events(Filter::all()).unwrap(), "/api/v3/event/all");
        assert_eq!(
            events(Filter::device("a b/c")).unwrap(),
            "/api/v3/event/device/name/a%20b%2Fc"
        );
        assert_eq!(
            events(Filter::all().between(1, 2)).unwrap(),
            "/api/v3/event/start/1/end/2"
        );
        assert!(matches!(
            events(Filter::device("d").between(1, 2)),
            Err(StoreError::Unsupported(_))
        ));
        assert_eq!(event_count(Filter::all().between(1, 2)).unwrap(), None);
        let both = Filter {
            device: Some("d"),
            resource: Some("r"),
            range: Some((1, 2)),
        };
        assert_eq!(
            readings(both),
            "/api/v3/reading/device/name/d/resourceName/r/start/1/end/2"
        );
        assert_eq!(
            readings(Filter::device("d").between(1, 2)),
            "/api/v3/reading/device/name/d/start/1/end/2"
        );
        assert_eq!(reading_count(Filter::resource("r")), None);
        assert_eq!(
            reading_count(Filter::device("d")).as_deref(),
            Some("/api/v3/reading/count/device/name/d")
        );
        assert_eq!(
            delete_events(Doomed::OlderThan { age_ns: 0 }).unwrap(),
            "/api/v3/event/age/0"
        );
        let by_source = Doomed::Source {
            device: "d",
            source: "s",
            up_to_ns: i64::MAX,
        };
        assert!(matches!(
            delete_events(by_source),
            Err(StoreError::Unsupported(why)) if why.contains("--retention edgex4")
        ));
    }
}
