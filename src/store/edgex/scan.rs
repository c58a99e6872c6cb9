//! The trait's default answers to the calls on one device and source: found by paging through
//! the lists every store has (the device's events, or all events), newest first, and keeping
//! the source's. That is right on any store, and it is all a client of EdgeX's REST API can
//! do: its lists and counts have no source. A store with a layout of its own overrides them
//! with a query of its own.
//!
//! A page is [`SCAN_PAGE`] events, under EdgeX's default MaxResultCount (1024), and the scan
//! ends at an empty page, not a short one, so a service that answers fewer than asked (a
//! smaller MaxResultCount) is still read to the end. Events added while a scan pages through
//! the list push older ones to later pages, where they are seen again: a count can be a few
//! high, and a page can start a few events early, as any paged read of a list being written.

use std::collections::BTreeSet;

use super::{DeviceSource, EventStore, Filter, Page, SourceFilter};
use crate::edgex::Event;
use crate::store::{StoreResult, UNLIMITED};

/// Events per page of a scan.
const SCAN_PAGE: usize = 1_000;

/// Calls `keep` with each event of `list`, newest first, page by page, until it returns
/// `false` or the list ends.
fn each_event<S: EventStore + ?Sized>(
    store: &mut S,
    list: Filter<'_>,
    mut keep: impl FnMut(Event) -> bool,
) -> StoreResult<()> {
    let mut offset = 0;
    loop {
        let page = store.events(
            list,
            Page {
                offset,
                limit: SCAN_PAGE,
            },
        )?;
        if page.is_empty() {
            return Ok(());
        }
        offset += page.len();
        for event in page {
            if !keep(event) {
                return Ok(());
            }
        }
    }
}

/// [`EventStore::source_event_count`] from the device's list.
pub(super) fn source_event_count<S: EventStore + ?Sized>(
    store: &mut S,
    filter: SourceFilter<'_>,
    limit: usize,
) -> StoreResult<u64> {
    let mut count = 0usize;
    if limit == 0 {
        return Ok(0);
    }
    each_event(store, Filter::device(filter.device), |event| {
        if filter.matches(&event) {
            count += 1;
        }
        count < limit
    })?;
    Ok(count as u64)
}

/// [`EventStore::source_events`] from the device's list.
pub(super) fn source_events<S: EventStore + ?Sized>(
    store: &mut S,
    filter: SourceFilter<'_>,
    page: Page,
) -> StoreResult<Vec<Event>> {
    let mut found = Vec::new();
    if page.limit == 0 {
        return Ok(found);
    }
    let mut skip = page.offset;
    each_event(store, Filter::device(filter.device), |event| {
        if !filter.matches(&event) {
            return true;
        }
        if skip > 0 {
            skip -= 1;
            return true;
        }
        found.push(event);
        page.limit == UNLIMITED || found.len() < page.limit
    })?;
    Ok(found)
}

/// [`EventStore::device_sources`] from the list of every event.
pub(super) fn device_sources<S: EventStore + ?Sized>(
    store: &mut S,
) -> StoreResult<Vec<DeviceSource>> {
    let mut pairs = BTreeSet::new();
    each_event(store, Filter::all(), |event| {
        if !event.source_name.is_empty() {
            pairs.insert(DeviceSource::new(event.device_name, event.source_name));
        }
        true
    })?;
    Ok(pairs.into_iter().collect())
}
