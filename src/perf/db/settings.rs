//! Where `-db` writes: `--db URL` and `etc/db.properties` (`url=`, `pool_size=`) resolved
//! into one [`DbSettings`].
//!
//! Invariants: `--db` overrides the file's `url`; a file the user named (`--db-prop`) must
//! exist, the default one may be absent; `pool_size` is a whole number >= 1 (default
//! [`DEFAULT_POOL_SIZE`], HibernatePool's); every error names the file, line and fix.

use std::path::Path;

use super::error::{input, DbError, URL_FORMS};
use crate::perf::properties::Properties;

/// The settings file `-db` reads when it exists (`url=`, `pool_size=`).
pub const DB_PROPERTIES: &str = "etc/db.properties";
/// `pool_size` when nothing sets it: HibernatePool's `connection.pool_size` default.
pub const DEFAULT_POOL_SIZE: usize = 1;

/// Where `-db` writes: a database URL and the connection pool size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbSettings {
    /// `postgres://…`, `postgresql://…`, `mysql://…` or `mariadb://…`.
    pub url: String,
    /// At most this many connections at once (`pool_size`, Hibernate's
    /// `connection.pool_size`).
    pub pool_size: usize,
    /// Where the settings came from, for the printout.
    pub source: String,
}

impl DbSettings {
    /// The settings from `file` (`url=`, `pool_size=`) when it exists, with `url` (from
    /// `--db`) overriding the file's. `file_given` says the user named the file, so its
    /// absence is an error rather than "use the defaults".
    pub fn resolve(file: &Path, file_given: bool, url: Option<&str>) -> Result<Self, DbError> {
        let shown = file.display();
        let props = if file.exists() {
            Some(Properties::load(file).map_err(|e| input(e.to_string()))?)
        } else if file_given {
            return Err(input(format!(
                "cannot read {shown}: no such file (check the --db-prop path)"
            )));
        } else {
            None
        };
        let pool_size = match props.as_ref().and_then(|p| p.get("pool_size")) {
            None => DEFAULT_POOL_SIZE,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    let line = props
                        .as_ref()
                        .and_then(|p| p.line_of("pool_size"))
                        .unwrap_or(0);
                    return Err(input(format!(
                        "{shown}:{line}: pool_size={v:?} is not a whole number >= 1 (the most connections the run opens at once)"
                    )));
                }
            },
        };
        let (url, source) = match (url, props.as_ref().and_then(|p| p.get("url"))) {
            (Some(u), _) => (u.to_string(), "--db".to_string()),
            (None, Some(u)) if !u.trim().is_empty() => (u.trim().to_string(), shown.to_string()),
            (None, _) if props.is_some() => {
                return Err(input(format!(
                    "{shown}: missing url (set url=postgres://user@127.0.0.1:5432/db or url=mysql://root@127.0.0.1:3306/db, or give --db URL)"
                )))
            }
            (None, _) => {
                return Err(input(format!(
                    "-db needs a database: give --db URL or create {DB_PROPERTIES} with url= ({URL_FORMS})"
                )))
            }
        };
        Ok(DbSettings {
            url,
            pool_size,
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_come_from_the_flag_or_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("db.properties");
        let e = DbSettings::resolve(&file, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("-db needs a database: give --db URL"), "{e}");
        let e = DbSettings::resolve(&file, true, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such file (check the --db-prop path)"), "{e}");
        let s = DbSettings::resolve(&file, false, Some("mysql://root@h/nw")).unwrap();
        assert_eq!(s.pool_size, DEFAULT_POOL_SIZE);
        std::fs::write(
            &file,
            "# db\nurl = postgres://root@127.0.0.1/nw\npool_size=4\n",
        )
        .unwrap();
        let s = DbSettings::resolve(&file, false, None).unwrap();
        assert_eq!(
            (s.url.as_str(), s.pool_size),
            ("postgres://root@127.0.0.1/nw", 4)
        );
        let s = DbSettings::resolve(&file, false, Some("mysql://root@h/nw")).unwrap();
        assert_eq!((s.url.as_str(), s.pool_size), ("mysql://root@h/nw", 4));
        std::fs::write(&file, "url=postgres:///nw\npool_size=0\n").unwrap();
        let e = DbSettings::resolve(&file, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.ends_with(":2: pool_size=\"0\" is not a whole number >= 1 (the most connections the run opens at once)"), "{e}");
        std::fs::write(&file, "pool_size=2\n").unwrap();
        let e = DbSettings::resolve(&file, false, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(": missing url (set url="), "{e}");
    }
}
