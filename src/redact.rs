//! Passwords out of what edgebench prints and records: a URL's user-info password, a spawned
//! target's `password=`, `kv -a`, all shown as `***`. Plain text functions at the bottom of the
//! crate, so every layer that prints a URL (targets, stores, buses, results files, the HTML
//! page) uses the same ones without depending on another.

/// `url` with the password of its user info, if any, replaced by `***`: error messages name
/// the URL, and terminals and logs should not show a password.
pub fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{hosts}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// This process's command line as results files record it: each URL's password (`--target
/// a=postgres://u:pw@h,b=…`, `--bus mqtts://u:pw@h`), a spawned target's `password=` and
/// the value of `-a`/`--authenticate` replaced by `***`, so a results directory can be
/// shared without the secrets of the run.
pub fn recorded_command_line() -> String {
    redact_command_line(std::env::args())
}

/// [`recorded_command_line`] of `args`.
fn redact_command_line(args: impl Iterator<Item = String>) -> String {
    let mut secret_next = false;
    args.map(|arg| {
        if std::mem::take(&mut secret_next) {
            return "***".to_string();
        }
        if arg == "-a" || arg == "--authenticate" {
            secret_next = true;
            return arg;
        }
        if arg.starts_with("--authenticate=") {
            return "--authenticate=***".to_string();
        }
        arg.split(',')
            .map(|item| redact_option_password(&redact_password(item)))
            .collect::<Vec<_>>()
            .join(",")
    })
    .collect::<Vec<_>>()
    .join(" ")
}

/// `…?user=u&password=PW&…` (a spawned target's options) with `PW` replaced by `***`.
fn redact_option_password(item: &str) -> String {
    let Some((base, query)) = item.split_once('?') else {
        return item.to_string();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some(("password", _)) => "password=***".to_string(),
            _ => pair.to_string(),
        })
        .collect();
    format!("{base}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_keeps_no_password() {
        let args = [
            "edgebench",
            "coredata",
            "--target",
            "a=rediss://u:pw@h:1?cacert=/c,redis://:pw@h,redis-tcp?user=u&password=s3&tls=yes",
            "-a",
            "u:pw",
            "--authenticate=pw",
            "-u",
            "redis://h:1",
        ]
        .map(String::from);
        assert_eq!(
            redact_command_line(args.into_iter()),
            "edgebench coredata --target a=rediss://u:***@h:1?cacert=/c,redis://:***@h,\
             redis-tcp?user=u&password=***&tls=yes -a *** --authenticate=*** -u redis://h:1"
        );
    }

    #[test]
    fn redacts_only_the_password() {
        assert_eq!(
            redact_password("postgres://u:pw@h:1/db?x=y"),
            "postgres://u:***@h:1/db?x=y"
        );
        assert_eq!(
            redact_password("mongodb://u:secret@h:27017/db?x=1"),
            "mongodb://u:***@h:27017/db?x=1"
        );
        assert_eq!(redact_password("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact_password("postgres:///db?host=/s"),
            "postgres:///db?host=/s"
        );
        assert_eq!(redact_password("mongodb://h:27017"), "mongodb://h:27017");
        assert_eq!(
            redact_password("mongodb://h/db?a=b@c"),
            "mongodb://h/db?a=b@c"
        );
        assert_eq!(redact_password("not a url"), "not a url");
    }
}
