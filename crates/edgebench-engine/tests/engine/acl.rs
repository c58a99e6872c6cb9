//! ACL users on the wire, byte for byte, on `edgebench serve` (TCP and Unix socket) and on
//! a real redis-server with the same script: ACL SETUSER's rules and errors, GETUSER and
//! LIST, AUTH and HELLO as a user, NOPERM for commands, keys and channels at top level, in
//! MULTI and in scripts, ACL LOG, DRYRUN, and what removing a user or revoking a channel
//! does to its connections. Each scenario runs on every server; a difference fails it.

use crate::support::redis_server::RedisServer;
use crate::support::served::{every_server, resp, Conn, TestServer};

/// A request from space-separated words.
fn cmd(line: &str) -> Vec<u8> {
    let words: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
    resp(&words)
}

fn bulk(s: &str) -> Vec<u8> {
    format!("${}\r\n{s}\r\n", s.len()).into_bytes()
}

fn error(s: &str) -> Vec<u8> {
    format!("-{s}\r\n").into_bytes()
}

const OK: &[u8] = b"+OK\r\n";

/// Removes every user but `default` and puts `default` back as a fresh server has it, so
/// the redis-server shared by a test's scenarios starts clean.
async fn reset_users(c: &mut Conn) {
    c.send(&cmd("ACL USERS")).await;
    let head = c.read_through(b"\r\n").await;
    let n: usize = String::from_utf8_lossy(&head[1..head.len() - 2])
        .parse()
        .expect("ACL USERS replies an array");
    let mut names = Vec::new();
    for _ in 0..n {
        let len = c.read_through(b"\r\n").await;
        let len: usize = String::from_utf8_lossy(&len[1..len.len() - 2])
            .parse()
            .expect("a bulk string");
        let name = c.read_n(len + 2).await;
        names.push(String::from_utf8_lossy(&name[..len]).into_owned());
    }
    for name in names.iter().filter(|n| *n != "default") {
        c.check(&cmd(&format!("ACL DELUSER {name}")), b":1\r\n")
            .await;
    }
    c.check(
        &cmd("ACL SETUSER default clearselectors on nopass allkeys allchannels +@all"),
        OK,
    )
    .await;
    c.check(&cmd("ACL LOG RESET"), OK).await;
    c.check(&cmd("FLUSHALL"), OK).await;
}

/// Every server with its users reset, its name, and a connection as `default` on it.
async fn clean_servers(redis: &RedisServer) -> Vec<(String, TestServer, Conn)> {
    let mut out = Vec::new();
    for (name, server) in every_server(redis).await {
        let mut admin = server.connect().await;
        reset_users(&mut admin).await;
        out.push((name, server, admin));
    }
    out
}

/// A connection authenticated as `user` with `pass`.
async fn login(server: &TestServer, user: &str, pass: &str) -> Conn {
    let mut c = server.connect().await;
    c.check(&cmd(&format!("AUTH {user} {pass}")), OK).await;
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setuser_rules_are_listed_and_read_back_as_redis_shows_them() {
    let redis = RedisServer::spawn();
    for (name, _server, mut c) in clean_servers(&redis).await {
        eprintln!("on {name}");
        c.check(&cmd("ACL WHOAMI"), &bulk("default")).await;
        c.check(&cmd("ACL SETUSER u1"), OK).await;
        c.check(
            &cmd("ACL SETUSER u2 on >p ~a* %R~b* %W~c* &ch* +@hash -hdel (+set ~x*)"),
            OK,
        )
        .await;
        c.check(&cmd("ACL SETUSER u3 +@all -@dangerous +@read -@write"), OK)
            .await;
        let mut want = b"*4\r\n".to_vec();
        want.extend(bulk("user default on nopass ~* &* +@all"));
        want.extend(bulk("user u1 off resetchannels -@all"));
        want.extend(bulk(
            "user u2 on #148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940 ~a* \
             %R~b* %W~c* resetchannels &ch* -@all +@hash -hdel (~x* resetchannels -@all +set)",
        ));
        want.extend(bulk(
            "user u3 off resetchannels +@all -@write -@admin -info",
        ));
        c.check(&cmd("ACL LIST"), &want).await;
        let mut want = b"*12\r\n".to_vec();
        want.extend(bulk("flags"));
        want.extend(b"*1\r\n");
        want.extend(bulk("on"));
        want.extend(bulk("passwords"));
        want.extend(b"*1\r\n");
        want.extend(bulk(
            "148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940",
        ));
        for (k, v) in [
            ("commands", "-@all +@hash -hdel"),
            ("keys", "~a* %R~b* %W~c*"),
            ("channels", "&ch*"),
        ] {
            want.extend(bulk(k));
            want.extend(bulk(v));
        }
        want.extend(bulk("selectors"));
        want.extend(b"*1\r\n*6\r\n");
        for (k, v) in [
            ("commands", "-@all +set"),
            ("keys", "~x*"),
            ("channels", ""),
        ] {
            want.extend(bulk(k));
            want.extend(bulk(v));
        }
        c.check(&cmd("ACL GETUSER u2"), &want).await;
        c.check(&cmd("ACL GETUSER nobody"), b"$-1\r\n").await;
        c.check(
            &cmd("ACL USERS"),
            b"*4\r\n$7\r\ndefault\r\n$2\r\nu1\r\n$2\r\nu2\r\n$2\r\nu3\r\n",
        )
        .await;
        c.check(&cmd("ACL DELUSER u1 u3 nobody"), b":2\r\n").await;
        c.check(
            &cmd("ACL DELUSER default"),
            &error("ERR The 'default' user cannot be removed"),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rules_are_refused_with_redis_s_errors_and_change_nothing() {
    let redis = RedisServer::spawn();
    for (name, _server, mut c) in clean_servers(&redis).await {
        eprintln!("on {name}");
        for (rules, why) in [
            ("+nosuch", "'+nosuch': Unknown command or category name in ACL"),
            ("+@nosuch", "'+@nosuch': Unknown command or category name in ACL"),
            ("bogus", "'bogus': Syntax error"),
            ("%X~a", "'%X~a': Syntax error"),
            ("#abc", "'#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"),
            ("<nope", "'<nope': The password you are trying to remove from the user does not exist"),
            ("+config|get|x", "'+config|get|x': Allowing first-arg of a subcommand is not supported"),
            ("allkeys ~a", "'~a': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"),
        ] {
            c.check(
                &cmd(&format!("ACL SETUSER bad on {rules}")),
                &error(&format!("ERR Error in ACL SETUSER modifier {why}")),
            )
            .await;
        }
        c.check(
            &resp(&[b"ACL", b"SETUSER", b"bad", b"(~a", b"+get"]),
            &error("ERR Unmatched parenthesis in acl selector starting at '(~a'."),
        )
        .await;
        c.check(
            &resp(&[b"ACL", b"SETUSER", b"a b"]),
            &error("ERR Usernames can't contain spaces or null characters"),
        )
        .await;
        c.check(&cmd("ACL GETUSER bad"), b"$-1\r\n").await;
        c.check(
            &cmd("ACL CAT nosuch"),
            &error("ERR Unknown category 'nosuch'"),
        )
        .await;
        c.check(
            &cmd("ACL GENPASS 0"),
            &error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"),
        )
        .await;
        c.check(
            &cmd("ACL GETUSER"),
            &error("ERR wrong number of arguments for 'acl|getuser' command"),
        )
        .await;
        c.check(&cmd("ACL LOAD"), &error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restricted_user_gets_noperm_for_commands_keys_and_channels_everywhere() {
    let redis = RedisServer::spawn();
    for (name, server, mut admin) in clean_servers(&redis).await {
        eprintln!("on {name}");
        admin
            .check(
                &cmd("ACL SETUSER r on >pw ~a* %R~ro* &ch* +get +set +publish +multi +exec +eval +subscribe +psubscribe"),
                OK,
            )
            .await;
        let mut c = login(&server, "r", "pw").await;
        c.check(
            &cmd("ACL WHOAMI"),
            &error("NOPERM this user has no permissions to run the 'acl|whoami' command"),
        )
        .await;
        c.check(&cmd("SET a1 v"), OK).await;
        c.check(&cmd("GET ro1"), b"$-1\r\n").await;
        let key = error(
            "NOPERM this user has no permissions to access one of the keys used as arguments",
        );
        c.check(&cmd("SET ro1 v"), &key).await;
        c.check(&cmd("GET b"), &key).await;
        c.check(
            &cmd("DEL a1"),
            &error("NOPERM this user has no permissions to run the 'del' command"),
        )
        .await;
        c.check(&cmd("PUBLISH ch1 m"), b":0\r\n").await;
        c.check(&cmd("PUBLISH other m"), &error("NOPERM this user has no permissions to access one of the channels used as arguments")).await;
        c.check(&cmd("PSUBSCRIBE ch"), &error("NOPERM this user has no permissions to access one of the channels used as arguments")).await;
        // Refused while queuing: the transaction is discarded.
        c.check(&cmd("MULTI"), OK).await;
        c.check(&cmd("GET b"), &key).await;
        c.check(
            &cmd("EXEC"),
            &error("EXECABORT Transaction discarded because of previous errors."),
        )
        .await;
        // In a script, redis.call gets the refusal as an error.
        c.check(
            &resp(&[b"EVAL", b"return redis.pcall('get', 'b')", b"0"]),
            &error("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"),
        )
        .await;
        c.check(
            &resp(&[b"EVAL", b"return {redis.acl_check_cmd('get', 'a1'), redis.acl_check_cmd('get', 'b'), redis.acl_check_cmd('del', 'a1')}", b"0"]),
            b"*3\r\n:1\r\n$-1\r\n$-1\r\n",
        )
        .await;
        // What DRYRUN says, without running anything.
        admin.check(&cmd("ACL DRYRUN r get a1"), OK).await;
        admin
            .check(
                &cmd("ACL DRYRUN r del a1"),
                &bulk("This user has no permissions to run the 'del' command"),
            )
            .await;
        admin
            .check(
                &cmd("ACL DRYRUN r set ro1 v"),
                &bulk("This user has no permissions to access the 'ro1' key"),
            )
            .await;
        admin
            .check(
                &cmd("ACL DRYRUN r publish x m"),
                &bulk("This user has no permissions to access the 'x' channel"),
            )
            .await;
        admin
            .check(
                &cmd("ACL DRYRUN nobody get a"),
                &error("ERR User 'nobody' not found"),
            )
            .await;
        admin
            .check(
                &cmd("ACL DRYRUN r nosuch"),
                &error("ERR Command 'nosuch' not found"),
            )
            .await;
    }
}

/// ACL LOG's entries without their ages and client lines: (count, reason, context, object,
/// username) of each.
async fn log_entries(c: &mut Conn, n: usize) -> Vec<[String; 5]> {
    c.send(&cmd(&format!("ACL LOG {n}"))).await;
    let mut out = Vec::new();
    let head = c.read_through(b"\r\n").await;
    let count: usize = String::from_utf8_lossy(&head[1..head.len() - 2])
        .parse()
        .expect("array");
    for _ in 0..count {
        let mut fields = Vec::new();
        c.read_through(b"\r\n").await;
        for _ in 0..14 {
            let line = c.read_through(b"\r\n").await;
            let text = String::from_utf8_lossy(&line).into_owned();
            if let Some(len) = text.strip_prefix('$') {
                let len: usize = len.trim().parse().expect("length");
                let body = c.read_n(len + 2).await;
                fields.push(String::from_utf8_lossy(&body[..len]).into_owned());
            } else {
                fields.push(text.trim().trim_start_matches(':').to_string());
            }
        }
        out.push([
            fields[1].clone(),
            fields[3].clone(),
            fields[5].clone(),
            fields[7].clone(),
            fields[9].clone(),
        ]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_failed_logins_are_logged_and_grouped() {
    let redis = RedisServer::spawn();
    for (name, server, mut admin) in clean_servers(&redis).await {
        eprintln!("on {name}");
        admin
            .check(
                &cmd("ACL SETUSER r on >pw ~a* +get +multi +discard +publish"),
                OK,
            )
            .await;
        let mut c = login(&server, "r", "pw").await;
        let noperm = |what: &str| error(&format!("NOPERM this user has no permissions to {what}"));
        c.check(&cmd("SET a v"), &noperm("run the 'set' command"))
            .await;
        c.check(&cmd("SET a v"), &noperm("run the 'set' command"))
            .await;
        c.check(
            &cmd("GET zz"),
            &noperm("access one of the keys used as arguments"),
        )
        .await;
        c.check(
            &cmd("PUBLISH ch m"),
            &noperm("access one of the channels used as arguments"),
        )
        .await;
        c.check(&cmd("MULTI"), OK).await;
        c.check(
            &cmd("GET zz"),
            &noperm("access one of the keys used as arguments"),
        )
        .await;
        c.check(&cmd("DISCARD"), OK).await;
        c.check(
            &cmd("AUTH r wrong"),
            &error("WRONGPASS invalid username-password pair or user is disabled."),
        )
        .await;
        let row = |n: &str, reason: &str, ctx: &str, obj: &str, user: &str| {
            [n, reason, ctx, obj, user].map(str::to_string)
        };
        assert_eq!(
            log_entries(&mut admin, 10).await,
            vec![
                row("1", "auth", "toplevel", "AUTH", "r"),
                row("1", "key", "multi", "zz", "r"),
                row("1", "channel", "toplevel", "ch", "r"),
                row("1", "key", "toplevel", "zz", "r"),
                row("2", "command", "toplevel", "set", "r"),
            ]
        );
        assert_eq!(log_entries(&mut admin, 1).await.len(), 1);
        admin.check(&cmd("ACL LOG RESET"), OK).await;
        admin.check(&cmd("ACL LOG"), b"*0\r\n").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_and_hello_log_in_as_a_user_and_requirepass_is_the_default_users_password() {
    let redis = RedisServer::spawn();
    for (name, server, mut admin) in clean_servers(&redis).await {
        eprintln!("on {name}");
        admin.check(&cmd("ACL SETUSER u on >pw +@all ~*"), OK).await;
        admin.check(&cmd("ACL SETUSER off >pw +@all ~*"), OK).await;
        let wrongpass = error("WRONGPASS invalid username-password pair or user is disabled.");
        let mut c = server.connect().await;
        c.check(&cmd("AUTH pw"), &error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")).await;
        c.check(&cmd("AUTH u bad"), &wrongpass).await;
        c.check(&cmd("AUTH nobody pw"), &wrongpass).await;
        c.check(&cmd("AUTH off pw"), &wrongpass).await;
        c.check(&cmd("AUTH u pw"), OK).await;
        c.check(&cmd("ACL WHOAMI"), &bulk("u")).await;
        c.check(&cmd("HELLO 2 AUTH u bad"), &wrongpass).await;
        c.send(&cmd("HELLO 2 AUTH default x")).await;
        c.read_through(b"modules\r\n*0\r\n").await;
        c.check(&cmd("ACL WHOAMI"), &bulk("default")).await;
        // requirepass: the default user's only password, and new connections must log in.
        admin.check(&cmd("CONFIG SET requirepass secret"), OK).await;
        let mut fresh = server.connect().await;
        fresh
            .check(&cmd("GET k"), &error("NOAUTH Authentication required."))
            .await;
        fresh.check(&cmd("AUTH wrong"), &wrongpass).await;
        fresh.check(&cmd("AUTH secret"), OK).await;
        fresh.check(&cmd("RESET"), b"+RESET\r\n").await;
        fresh
            .check(&cmd("GET k"), &error("NOAUTH Authentication required."))
            .await;
        fresh.check(&cmd("AUTH default secret"), OK).await;
        admin.check(&cmd("CONFIG SET requirepass \"\""), OK).await;
        admin
            .check(
                &cmd("CONFIG SET requirepass"),
                &error("ERR wrong number of arguments for 'config|set' command"),
            )
            .await;
        admin
            .send(&resp(&[b"CONFIG", b"SET", b"requirepass", b""]))
            .await;
        admin.expect(OK).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_user_or_revoking_a_channel_disconnects_its_clients() {
    let redis = RedisServer::spawn();
    for (name, server, mut admin) in clean_servers(&redis).await {
        eprintln!("on {name}");
        admin
            .check(
                &cmd("ACL SETUSER s on >pw +@all ~* resetchannels &news.* &sport"),
                OK,
            )
            .await;
        let mut sub = login(&server, "s", "pw").await;
        sub.check(
            &cmd("SUBSCRIBE sport"),
            b"*3\r\n$9\r\nsubscribe\r\n$5\r\nsport\r\n:1\r\n",
        )
        .await;
        let mut pattern = login(&server, "s", "pw").await;
        pattern
            .check(
                &cmd("PSUBSCRIBE news.*"),
                b"*3\r\n$10\r\npsubscribe\r\n$6\r\nnews.*\r\n:1\r\n",
            )
            .await;
        let mut plain = login(&server, "s", "pw").await;
        // Keeping every channel held, and adding one, disconnects nobody.
        admin.check(&cmd("ACL SETUSER s &more"), OK).await;
        // Taking `sport` away disconnects its subscriber only.
        admin
            .check(&cmd("ACL SETUSER s resetchannels &news.* &more"), OK)
            .await;
        sub.expect_closed().await;
        pattern
            .check(&cmd("PING"), b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
            .await;
        plain.check(&cmd("PING"), b"+PONG\r\n").await;
        // CLIENT KILL USER, then ACL DELUSER: every connection of the user goes.
        admin
            .check(
                &cmd("CLIENT KILL USER nobody"),
                &error("ERR No such user 'nobody'"),
            )
            .await;
        admin.check(&cmd("CLIENT KILL USER s"), b":2\r\n").await;
        pattern.expect_closed().await;
        plain.expect_closed().await;
        let mut again = login(&server, "s", "pw").await;
        admin.check(&cmd("ACL DELUSER s"), b":1\r\n").await;
        again.expect_closed().await;
        // A client deleting its own user gets the reply, then the connection closes.
        admin
            .check(&cmd("ACL SETUSER me on >pw +@all ~*"), OK)
            .await;
        let mut me = login(&server, "me", "pw").await;
        me.check(&cmd("ACL DELUSER me"), b":1\r\n").await;
        me.expect_closed().await;
    }
}
