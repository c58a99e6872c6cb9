//! `-u/--uri`: memtier's `redis[s]://[USER:PASSWORD@]HOST[:PORT][/DB]` and the Unix socket forms
//! `--target` takes, read by the one Redis URL parser ([`crate::target::url::RedisUrl`]);
//! this file only turns its errors into [`KvConfigError`]s that name `--uri`.

use crate::kv::error::{invalid, KvConfigError};
use crate::target::url::{RedisUrl, UrlError, URL_FORMS};

/// `-u/--uri`, read by the one Redis URL parser ([`crate::target::url`]): memtier's
/// `redis[s]://[USER:PASSWORD@]HOST[:PORT][/DB]`, and the Unix socket forms `--target` takes.
pub(super) fn parse_uri(v: &str) -> Result<RedisUrl, KvConfigError> {
    RedisUrl::parse(v).map_err(|e| match e {
        UrlError::NotRedis => invalid("--uri", v, URL_FORMS),
        UrlError::Bad(why) => invalid("--uri", v, format!("{why}; {URL_FORMS}")),
    })
}
