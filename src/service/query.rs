//! What a request names besides its body: path parameters, the `offset`/`limit` paging of the
//! list routes, time ranges and ages, each parsed and range-checked as EdgeX's
//! `internal/pkg/utils/http.go` does (v4.0.2), with its messages, so a malformed request is
//! a 400 and never reaches a store.
//!
//! Paging, as v4.0.2 reads it:
//! - `offset` defaults to 0 and must lie in `-1..=2^31-1`; `-1` means "skip the total count"
//!   (`controller/http/const.go` `minOffset = -1`; `totalCount` is then 0).
//! - `limit` defaults to 20 and must lie in `-1..=MaxResultCount`; `-1` means MaxResultCount.
//!   A larger limit is rejected with 400, not capped: `ParseQueryStringToInt` checks the value
//!   against `[min, max]` and only the *default* is lowered to the maximum.
//! - An empty value (`?limit=`) is the default; the first of repeated keys counts.
//! - Values are trimmed and read as decimal integers (Go's `strconv.Atoi`).
//! - After the list and the count, [`check_count_range`] answers 416 when `offset` lies past
//!   the total (v4's `utils.CheckCountRange`).

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use axum::http::{StatusCode, Uri};
use serde::de::DeserializeOwned;

use super::errors::ApiError;
use crate::store::edgex::{Filter, Page};

/// `limit` when the request names none (`common.DefaultLimit`).
pub const DEFAULT_LIMIT: i64 = 20;
/// The largest `offset` EdgeX's list controllers accept (`math.MaxInt32`).
pub const MAX_OFFSET: i64 = i32::MAX as i64;

/// The path parameters of a route, or a 400 `BaseResponse` (never axum's plain-text
/// rejection) when they do not decode.
pub struct Params<T>(pub T);

impl<T, S> FromRequestParts<S> for Params<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(t)| Params(t))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

/// The paging a list request asked for, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    /// `-1` (skip the count) or the records to skip.
    pub offset: i64,
    /// Records to return at most (`-1` already replaced by MaxResultCount).
    pub limit: usize,
}

impl Paging {
    /// Parses `offset` and `limit` from the request's query string.
    pub fn parse(uri: &Uri, max_result_count: usize) -> Result<Paging, ApiError> {
        let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map_err(|e| ApiError::bad_request(e.body_text()))?;
        if first(&pairs, "aggregateFunc").is_some() {
            // v4.0.2's aggregates (MIN, MAX, ...) are SQL over numeric readings; edgebench's
            // stores have no such call, and answering plain readings would be a wrong answer.
            return Err(ApiError::bad_request(
                "aggregateFunc is not supported by edgebench's core-data service: \
                 drop the parameter to list the readings",
            ));
        }
        let max = i64::try_from(max_result_count).unwrap_or(i64::MAX);
        let offset = int_param(&pairs, "offset", 0, -1, MAX_OFFSET)?;
        let limit = int_param(&pairs, "limit", DEFAULT_LIMIT.min(max), -1, max)?;
        let limit = if limit == -1 {
            max_result_count
        } else {
            limit as usize // 0..=max, checked above
        };
        Ok(Paging { offset, limit })
    }

    /// Whether the total count is wanted (`offset != -1`).
    pub fn counts(&self) -> bool {
        self.offset >= 0
    }

    /// The store page: `offset=-1` skips nothing.
    pub fn page(&self) -> Page {
        Page {
            offset: self.offset.max(0) as usize,
            limit: self.limit,
        }
    }
}

/// The first value of `key`, when it is not empty.
fn first<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// EdgeX's `ParseQueryStringToInt`.
fn int_param(
    pairs: &[(String, String)],
    key: &str,
    default: i64,
    min: i64,
    max: i64,
) -> Result<i64, ApiError> {
    let Some(text) = first(pairs, key) else {
        return Ok(default);
    };
    let value: i64 = text.trim().parse().map_err(|e| {
        ApiError::bad_request(format!(
            "failed to parse querystring {key}'s value {text} into integer. Error:{e}"
        ))
    })?;
    if value < min || value > max {
        return Err(ApiError::bad_request(format!(
            "querystring {key}'s value {value} is out of min {min} ~ max {max} range."
        )));
    }
    Ok(value)
}

/// A `{start}`/`{end}` path pair, ns: both integers `>= 0`, `end >= start`
/// (EdgeX's `ParseTimeRangeOffsetLimit`).
pub fn time_range(start: &str, end: &str) -> Result<(i64, i64), ApiError> {
    let start_ns = path_time("start", start)?;
    let end_ns = path_time("end", end)?;
    if end_ns < start_ns {
        return Err(ApiError::bad_request(format!(
            "end's value {end_ns} is not allowed to be less than start's value {start_ns}"
        )));
    }
    Ok((start_ns, end_ns))
}

/// EdgeX's `ParsePathParamToInt64(c, key, 0, math.MaxInt64)`.
fn path_time(key: &str, text: &str) -> Result<i64, ApiError> {
    let value: i64 = text.parse().map_err(|e| {
        ApiError::bad_request(format!(
            "failed to parse path param {key}'s value {text} into integer. Error:{e}"
        ))
    })?;
    if value < 0 {
        return Err(ApiError::bad_request(format!(
            "path param {key}'s value {value} is out of min 0 ~ max {} range.",
            i64::MAX
        )));
    }
    Ok(value)
}

/// The `{age}` of `DELETE /event/age/{age}`, ns: any integer (EdgeX's `strconv.ParseInt`).
pub fn age(text: &str) -> Result<i64, ApiError> {
    text.parse()
        .map_err(|e| ApiError::bad_request(format!("age format parsing failed: {e}")))
}

/// Whether a list keeps its page after the count: `false` (an empty page) when `limit` is 0
/// or nothing matches; 416 when `offset` lies past a non-zero total (v4's
/// `utils.CheckCountRange`).
pub fn check_count_range(total: u64, offset: i64, limit: usize) -> Result<bool, ApiError> {
    if limit == 0 || total == 0 {
        return Ok(false);
    }
    if offset > 0 && offset as u64 > total {
        return Err(ApiError::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            format!("query objects bounds out of range. length:{total} offset:{offset}"),
        ));
    }
    Ok(true)
}

/// Which records a route covers, owned, so it can travel to a blocking store call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// `{name}` / `{deviceName}`.
    pub device: Option<String>,
    /// `{resourceName}`.
    pub resource: Option<String>,
    /// `{start}`..=`{end}`, ns.
    pub range: Option<(i64, i64)>,
}

impl Scope {
    /// The store filter.
    pub fn filter(&self) -> Filter<'_> {
        Filter {
            device: self.device.as_deref(),
            resource: self.resource.as_deref(),
            range: self.range,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> Result<Paging, ApiError> {
        Paging::parse(&format!("/x?{q}").parse().unwrap(), 1024)
    }

    #[test]
    fn paging_follows_edgex_defaults_and_ranges() {
        assert_eq!(
            parse("").unwrap(),
            Paging {
                offset: 0,
                limit: 20
            }
        );
        assert_eq!(parse("limit=-1").unwrap().limit, 1024);
        assert_eq!(
            parse("limit=&offset=").unwrap(),
            Paging {
                offset: 0,
                limit: 20
            }
        );
        assert_eq!(
            parse("offset=-1&limit=5").unwrap(),
            Paging {
                offset: -1,
                limit: 5
            }
        );
        assert_eq!(parse("limit=%207%20").unwrap().limit, 7);
        assert_eq!(parse("limit=3&limit=9").unwrap().limit, 3);
        let too_big = parse("limit=1025").unwrap_err();
        assert_eq!(
            too_big.message,
            "querystring limit's value 1025 is out of min -1 ~ max 1024 range."
        );
        for bad in [
            "limit=-2",
            "offset=-2",
            "offset=x",
            "limit=1.5",
            "offset=2147483648",
        ] {
            assert_eq!(
                parse(bad).unwrap_err().status,
                StatusCode::BAD_REQUEST,
                "{bad}"
            );
        }
        // The default limit never exceeds a smaller MaxResultCount.
        let small = Paging::parse(&"/x".parse().unwrap(), 5).unwrap();
        assert_eq!(small.limit, 5);
    }

    #[test]
    fn time_ranges_and_ages_are_checked() {
        assert_eq!(time_range("5", "5").unwrap(), (5, 5));
        assert!(time_range("6", "5")
            .unwrap_err()
            .message
            .contains("less than"));
        assert!(time_range("-1", "5").is_err());
        assert!(time_range("1", "x").is_err());
        assert_eq!(age("-3").unwrap(), -3);
        assert!(age("1e3").is_err());
    }

    #[test]
    fn count_range_empties_or_refuses_as_edgex_does() {
        assert_eq!(check_count_range(0, 5, 20), Ok(false));
        assert_eq!(check_count_range(3, 0, 0), Ok(false));
        assert_eq!(check_count_range(3, 3, 20), Ok(true));
        assert_eq!(check_count_range(3, -1, 20), Ok(true));
        assert_eq!(
            check_count_range(3, 4, 20).unwrap_err().status,
            StatusCode::RANGE_NOT_SATISFIABLE
        );
    }
}
