//! The list-then-count that every list route runs, events or readings (and the count that
//! every count route runs): parse the paging, run
//! the list query, then the count (EdgeX's order, `application/{event,reading}.go`) unless
//! `offset=-1` skips it, then let [`check_count_range`] empty the page or answer 416. Both
//! queries run in one blocking call on one store.

use axum::http::Uri;

use super::errors::ApiError;
use super::query::{check_count_range, Paging, Scope};
use super::routes::AppState;
use crate::edgex::dto::{BaseResponse, CountResponse};
use crate::store::edgex::{EventStore, Filter, Page};
use crate::store::StoreResult;

/// A store's list call for one kind of record.
pub type ListFn<T> = fn(&mut dyn EventStore, Filter<'_>, Page) -> StoreResult<Vec<T>>;
/// A store's count call for the same kind.
pub type CountFn = fn(&mut dyn EventStore, Filter<'_>) -> StoreResult<u64>;

/// The page and the total count (0 when skipped) of the records `scope` covers.
pub async fn list_and_count<T: Send + 'static>(
    state: &AppState,
    scope: Scope,
    uri: &Uri,
    list: ListFn<T>,
    count: CountFn,
) -> Result<(Vec<T>, u64), ApiError> {
    let paging = Paging::parse(uri, state.cfg.max_result_count)?;
    let page = paging.page();
    let counts = paging.counts();
    let (records, total) = state
        .pool
        .run(move |store| {
            let filter = scope.filter();
            let records = list(store, filter, page)?;
            let total = if counts { count(store, filter)? } else { 0 };
            Ok((records, total))
        })
        .await?;
    if counts && !check_count_range(total, paging.offset, paging.limit)? {
        return Ok((Vec::new(), total));
    }
    Ok((records, total))
}

/// The count of the records `scope` covers, as a `CountResponse`.
pub async fn count(
    state: &AppState,
    scope: Scope,
    count: CountFn,
) -> Result<axum::Json<CountResponse>, ApiError> {
    let count = state
        .pool
        .run(move |store| count(store, scope.filter()))
        .await?;
    Ok(axum::Json(CountResponse {
        base: BaseResponse::status(200),
        count,
    }))
}
