//! ACL users, as Redis 7.0 has them: who a client is, what it may run, and on which keys
//! and channels.
//!
//! The store ([`Acl`], one per engine) maps names to users. Each user lives in a
//! [`UserHandle`] that clients authenticated as it share: ACL SETUSER changes the user in
//! place, so the next command of every such client sees the change (as in Redis). A handle
//! also caches whether its user may run anything on anything (`unrestricted`): the check on
//! every command is then one relaxed load and a branch, and only users with restrictions
//! pay for looking at the request (see [`check`]).
//!
//! Passwords are kept as SHA-256 hex digests, as Redis keeps them (`#<hash>` in ACL LIST).
//! Files: `catalog` (commands and categories numbered), `selector` (one set of
//! permissions and its rules), `user` (users and their rules), `describe` (permissions
//! back to rules), `log` (ACL LOG), `file` (the ACL file).

pub(crate) mod catalog;
pub(crate) mod describe;
pub(crate) mod file;
pub(crate) mod log;
pub(crate) mod request;
pub(crate) mod selector;
pub(crate) mod user;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};

use sha2::{Digest, Sha256};

use self::catalog::Catalog;
use self::log::{AclLog, Context, Entry, Reason};
use self::request::Request;
pub(crate) use self::selector::READ;
use self::selector::{Denied, WRITE};
use self::user::{merge_selectors, User};
use crate::engine::client::Client;
use crate::engine::cmd::server::client_info_line;
use crate::engine::handle::Engine;
use crate::resp::reply::Reply;

/// Why a rule of ACL SETUSER was refused; the texts are Redis 7.0's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("Unknown command or category name in ACL")]
    Unknown,
    #[error("Syntax error")]
    Syntax,
    #[error(
        "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does \
         not have any effect. Try 'resetkeys' to start with an empty list of patterns"
    )]
    KeyAfterAll,
    #[error(
        "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and \
         does not have any effect. Try 'resetchannels' to start with an empty list of channels"
    )]
    ChannelAfterAll,
    #[error("The password you are trying to remove from the user does not exist")]
    NoSuchPassword,
    #[error(
        "The password hash must be exactly 64 characters and contain only lowercase \
         hexadecimal characters"
    )]
    BadHash,
    #[error("Allowing first-arg of a subcommand is not supported")]
    SubcommandFirstArg,
    #[error("Duplicate user found. A user can only be defined once in config files")]
    Duplicate,
}

/// The SHA-256 of a password, as lowercase hex.
pub(crate) fn hash_password(password: &[u8]) -> String {
    let digest = Sha256::digest(password);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

/// Compares in time independent of where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A user as the clients authenticated as it hold it.
#[derive(Debug)]
pub struct UserHandle {
    name: String,
    unrestricted: AtomicBool,
    user: RwLock<User>,
}

impl UserHandle {
    fn new(user: User) -> Arc<UserHandle> {
        Arc::new(UserHandle {
            name: user.name.clone(),
            unrestricted: AtomicBool::new(user.unrestricted()),
            user: RwLock::new(user),
        })
    }

    /// The user's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the user may run any command on any key and channel: nothing to check.
    #[inline]
    pub(crate) fn unrestricted(&self) -> bool {
        self.unrestricted.load(Ordering::Relaxed)
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, User> {
        self.user.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn replace(&self, user: User) {
        let unrestricted = user.unrestricted();
        *self.user.write().unwrap_or_else(PoisonError::into_inner) = user;
        self.unrestricted.store(unrestricted, Ordering::Relaxed);
    }
}

/// The engine's users and ACL log.
#[derive(Debug)]
pub struct Acl {
    users: RwLock<BTreeMap<String, Arc<UserHandle>>>,
    default: Arc<UserHandle>,
    /// Whether a new connection must authenticate: the default user has a password or is
    /// off (read by every not-yet-authenticated client's command).
    default_needs_auth: AtomicBool,
    /// `acl-pubsub-default allchannels`: new users and selectors get every channel.
    pubsub_default_all: AtomicBool,
    /// `acllog-max-len`.
    log_max_len: AtomicUsize,
    pub(crate) log: AclLog,
}

impl Default for Acl {
    fn default() -> Self {
        let default = UserHandle::new(User::default_user());
        let mut users = BTreeMap::new();
        users.insert("default".to_string(), Arc::clone(&default));
        Acl {
            users: RwLock::new(users),
            default,
            default_needs_auth: AtomicBool::new(false),
            pubsub_default_all: AtomicBool::new(false),
            log_max_len: AtomicUsize::new(128),
            log: AclLog::default(),
        }
    }
}

impl Acl {
    /// The `default` user.
    pub fn default_user(&self) -> &Arc<UserHandle> {
        &self.default
    }

    /// Whether a new connection starts unauthenticated.
    pub(crate) fn default_needs_auth(&self) -> bool {
        self.default_needs_auth.load(Ordering::Relaxed)
    }

    fn refresh_default(&self) {
        let u = self.default.read();
        self.default_needs_auth
            .store(!(u.nopass && u.enabled), Ordering::Relaxed);
    }

    pub(crate) fn set_pubsub_default_all(&self, all: bool) {
        self.pubsub_default_all.store(all, Ordering::Relaxed);
    }

    pub(crate) fn pubsub_default_all(&self) -> bool {
        self.pubsub_default_all.load(Ordering::Relaxed)
    }

    pub(crate) fn set_log_max_len(&self, n: usize) {
        self.log_max_len.store(n, Ordering::Relaxed);
        self.log.trim(n);
    }

    pub(crate) fn log_max_len(&self) -> usize {
        self.log_max_len.load(Ordering::Relaxed)
    }

    /// `requirepass`: the default user's only password, or `nopass` when empty.
    pub(crate) fn set_default_password(&self, password: &str) {
        let mut u = self.default.read().clone();
        let _ = u.apply(b"resetpass", false);
        if password.is_empty() {
            let _ = u.apply(b"nopass", false);
        } else {
            let _ = u.apply(format!(">{password}").as_bytes(), false);
        }
        self.default.replace(u);
        self.refresh_default();
    }

    /// A user by name.
    pub fn user(&self, name: &[u8]) -> Option<Arc<UserHandle>> {
        let name = std::str::from_utf8(name).ok()?;
        self.users
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// Every user, in name order.
    pub(crate) fn users(&self) -> Vec<Arc<UserHandle>> {
        self.users
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// The user `name` if the password is right and the user is on.
    pub(crate) fn authenticate(&self, name: &[u8], password: &[u8]) -> Option<Arc<UserHandle>> {
        let handle = self.user(name)?;
        let ok = {
            let u = handle.read();
            let hash = hash_password(password);
            u.enabled
                && (u.nopass
                    || u.passwords
                        .iter()
                        .any(|p| same_secret(p.as_bytes(), hash.as_bytes())))
        };
        ok.then_some(handle)
    }

    /// ACL SETUSER: applies the rules to a copy of the user (a new user if none), and only
    /// if all are valid, stores it. Returns the user as it was (`None` if new) and the
    /// handle, so the caller can disconnect subscribers that lost a channel.
    pub(crate) fn set_user(
        &self,
        name: &str,
        rules: &[&[u8]],
    ) -> Result<(Option<User>, Arc<UserHandle>), String> {
        let rules = merge_selectors(rules).map_err(|at| {
            format!(
                "Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(&at)
            )
        })?;
        let existing = self.user(name.as_bytes());
        let before = existing.as_ref().map(|h| h.read().clone());
        let all_channels = self.pubsub_default_all();
        let mut user = before
            .clone()
            .unwrap_or_else(|| User::new(name, all_channels));
        for rule in &rules {
            user.apply(rule, all_channels).map_err(|e| {
                format!(
                    "Error in ACL SETUSER modifier '{}': {e}",
                    String::from_utf8_lossy(rule)
                )
            })?;
        }
        let handle = match existing {
            Some(handle) => {
                handle.replace(user);
                handle
            }
            None => {
                let handle = UserHandle::new(user);
                self.users
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(name.to_string(), Arc::clone(&handle));
                handle
            }
        };
        if Arc::ptr_eq(&handle, &self.default) {
            self.refresh_default();
        }
        Ok((before, handle))
    }

    /// ACL DELUSER of one user: its handle if it existed.
    pub(crate) fn remove_user(&self, name: &[u8]) -> Option<Arc<UserHandle>> {
        let name = std::str::from_utf8(name).ok()?;
        self.users
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name)
    }

    /// Replaces every user at once (ACL LOAD, `--aclfile` at startup): the default user
    /// keeps its handle (its clients stay connected) and gets the file's rules, or its
    /// fresh definition when the file has none. Returns the handles dropped or replaced.
    pub(crate) fn replace_all(&self, users: Vec<User>) -> Vec<Arc<UserHandle>> {
        let mut map = BTreeMap::new();
        let mut default = None;
        for u in users {
            if u.name == "default" {
                default = Some(u);
            } else {
                map.insert(u.name.clone(), UserHandle::new(u));
            }
        }
        self.default
            .replace(default.unwrap_or_else(User::default_user));
        self.refresh_default();
        map.insert("default".to_string(), Arc::clone(&self.default));
        let old = std::mem::replace(
            &mut *self.users.write().unwrap_or_else(PoisonError::into_inner),
            map,
        );
        old.into_values()
            .filter(|h| !Arc::ptr_eq(h, &self.default))
            .collect()
    }
}

/// The check on a request of `client`, whose user has restrictions (the caller tested
/// [`UserHandle::unrestricted`] first): the refusal, logged in ACL LOG under `context`,
/// or `None`. `index` is the command's place in the dispatch table.
pub(crate) fn refusal(
    engine: &Engine,
    client: &Client,
    index: usize,
    args: &[&[u8]],
    context: Context,
) -> Option<(Denied, usize)> {
    let handle = client.user.as_ref()?;
    let cat = Catalog::get();
    let id = cat.request_id(index, args)?;
    let user = handle.read();
    if allowed_at_once(&user, cat, id, args) {
        return None;
    }
    let denied = check(&user, id, args).err()?;
    drop(user);
    log_refusal(engine, client, id, args, denied, context);
    Some((denied, id))
}

/// Adds a refusal to ACL LOG.
pub(crate) fn log_refusal(
    engine: &Engine,
    client: &Client,
    id: usize,
    args: &[&[u8]],
    denied: Denied,
    context: Context,
) {
    let name = &Catalog::get().names[id];
    let (reason, object) = match denied {
        Denied::Command => (Reason::Command, name.as_bytes().to_vec()),
        Denied::Key(at) => (Reason::Key, args.get(at).map_or(Vec::new(), |a| a.to_vec())),
        Denied::Channel(at) => (
            Reason::Channel,
            args.get(at).map_or(Vec::new(), |a| a.to_vec()),
        ),
    };
    add_log_entry(
        engine,
        client,
        reason,
        context,
        object,
        client.user_name(),
        name,
    );
}

/// Adds an entry to ACL LOG for `client` (running the command `cmd`).
pub(crate) fn add_log_entry(
    engine: &Engine,
    client: &Client,
    reason: Reason,
    context: Context,
    object: Vec<u8>,
    username: &str,
    cmd: &str,
) {
    let acl = &engine.inner().server.acl;
    let entry = Entry {
        count: 1,
        reason,
        context,
        object,
        username: username.as_bytes().to_vec(),
        at_ms: now_ms(),
        client_info: client_info_line(client, cmd),
    };
    acl.log.add(entry, acl.log_max_len());
}

/// Wall-clock time in ms (ACL LOG's ages are wall-clock, as Redis's `mstime()`).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The check on a command from a user with restrictions: `id` is the command's
/// [`Catalog`] id. Allowed when one selector allows the command and all its keys and
/// channels; otherwise the refusal Redis would pick (see [`Denied::worse`]).
pub(crate) fn check(user: &User, id: usize, args: &[&[u8]]) -> Result<(), Denied> {
    let request = Request::new(id, args);
    let mut worst: Option<Denied> = None;
    for s in user.all_selectors() {
        match s.check(&request) {
            Ok(()) => return Ok(()),
            Err(d) => worst = Some(worst.map_or(d, |w| w.worse(d))),
        }
    }
    Err(worst.unwrap_or(Denied::Command))
}

/// The check's fast path: a command whose one key is its first argument, allowed by some
/// selector (its command bit, and its key by a pattern). True only where [`check`] allows
/// too; false leaves the answer (and the refusal's reason) to [`check`]. A restricted user's
/// GET or SET costs a hundred-odd instructions this way (docs/PERFORMANCE.md).
#[inline]
fn allowed_at_once(user: &User, cat: &Catalog, id: usize, args: &[&[u8]]) -> bool {
    // Such a command names no channel, so no selector's channel rules apply to it.
    let Some(need) = cat.single_key(id, args) else {
        return false;
    };
    user.all_selectors()
        .any(|s| (s.all_commands || s.bit(id)) && s.key_allowed(args[1], need))
}

/// Whether one selector allows the request and gives `needed` access ([`READ`], [`WRITE`])
/// to every key (Redis's test before SORT reads keys named by values).
pub(crate) fn full_key_access(user: &User, id: usize, args: &[&[u8]], needed: u8) -> bool {
    let request = Request::new(id, args);
    user.all_selectors().any(|s| {
        s.check(&request).is_ok()
            && (s.all_keys
                || s.keys
                    .iter()
                    .any(|(p, f)| f & needed == needed && p == b"*"))
    })
}

/// The reply to a refused command at top level or while queuing (Redis's `processCommand`).
pub(crate) fn noperm_text(denied: Denied, command: &str) -> String {
    match denied {
        Denied::Command => {
            format!("NOPERM this user has no permissions to run the '{command}' command")
        }
        Denied::Key(_) => "NOPERM this user has no permissions to access one of the keys used \
                           as arguments"
            .to_string(),
        Denied::Channel(_) => "NOPERM this user has no permissions to access one of the \
                               channels used as arguments"
            .to_string(),
    }
}

/// Why a script's command was refused (`The user executing the script ...`).
#[cfg(feature = "scripting")]
pub(crate) fn script_text(denied: Denied) -> &'static str {
    match denied {
        Denied::Command => "can't run this command or subcommand",
        Denied::Key(_) => {
            "can't access at least one of the keys mentioned in the command arguments"
        }
        Denied::Channel(_) => "can't publish to the channel mentioned in the command",
    }
}

/// Why EXEC refused a command queued before the user's permissions changed.
pub(crate) fn exec_text(denied: Denied) -> String {
    let reason = match denied {
        Denied::Command => "no permission to execute the command or subcommand",
        Denied::Key(_) => "no permission to touch the specified keys",
        Denied::Channel(_) => "no permission to access one of the channels used as arguments",
    };
    format!(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and \
         the EXEC call. This command is no longer allowed for the following reason: {reason}"
    )
}

/// Whether a user change revoked a channel the user's subscribers may hold: Redis's test
/// (the new channels are all-channels, or every old channel is still listed) before it
/// looks at the subscribers.
pub(crate) fn channels_revoked(before: &User, after: &User) -> bool {
    if after.all_selectors().any(|s| s.all_channels) {
        return false;
    }
    let upcoming: Vec<&Vec<u8>> = after.all_selectors().flat_map(|s| &s.channels).collect();
    before
        .all_selectors()
        .any(|s| s.all_channels || s.channels.iter().any(|c| !upcoming.contains(&c)))
}

/// The channel patterns of every selector of a user (to test a subscriber's channels
/// against after [`channels_revoked`]).
pub(crate) fn all_channel_patterns(user: &User) -> Vec<Vec<u8>> {
    user.all_selectors()
        .flat_map(|s| s.channels.iter().cloned())
        .collect()
}

// ---- the engine's ACL API ----

impl Engine {
    /// The refusal of a request the server runs itself (SUBSCRIBE, PUBLISH...): the
    /// `-NOPERM` reply, logged in ACL LOG, or `None` when the client's user may run it.
    pub fn acl_refusal(&self, client: &Client, args: &[&[u8]]) -> Option<Reply> {
        if !client.acl_restricted() {
            return None;
        }
        let (index, _) = crate::engine::cmd::lookup_indexed(args.first()?)?;
        let context = if client.in_multi() {
            Context::Multi
        } else {
            Context::Toplevel
        };
        let (denied, id) = refusal(self, client, index, args, context)?;
        let name = &Catalog::get().names[id];
        self.inner()
            .server
            .count_error(&noperm_text(denied, name), Some(index), true);
        Some(Reply::Error(noperm_text(denied, name).into()))
    }

    /// Defines a user as redis.conf's `user` directive does (`name rule rule...`), at
    /// startup: the error says which rule is wrong.
    pub fn acl_define_user(&self, line: &str) -> Result<(), String> {
        // Split as redis.conf's lines are (`sdssplitargs`): quotes keep spaces in a word.
        let words = crate::resp::parse::split_args(line.as_bytes())
            .map_err(|_| "unbalanced quotes in the user line".to_string())?;
        let Some((name, rules)) = words.split_first() else {
            return Err("a user line needs a name and rules (\"alice on >pass ~* +@all\")".into());
        };
        let name = String::from_utf8_lossy(name);
        if !user::valid_name(name.as_bytes()) {
            return Err(format!("username '{name}' contains invalid characters"));
        }
        let rules: Vec<&[u8]> = rules.iter().map(Vec::as_slice).collect();
        self.inner().server.acl.set_user(&name, &rules).map(|_| ())
    }

    /// Loads the users of an ACL file (the `aclfile` parameter is set to `path`): all or
    /// nothing, with the file, line and problem in the error.
    pub fn acl_load_file(&self, path: &str) -> Result<(), String> {
        let acl = &self.inner().server.acl;
        let users = file::load(path, acl.pubsub_default_all())?;
        acl.replace_all(users);
        self.configure("aclfile", path).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_hash_as_redis_shows_them() {
        assert_eq!(
            hash_password(b"p"),
            "148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940"
        );
    }

    #[test]
    fn requirepass_makes_the_default_user_need_a_password() {
        let acl = Acl::default();
        assert!(!acl.default_needs_auth());
        acl.set_default_password("secret");
        assert!(acl.default_needs_auth());
        assert!(acl.authenticate(b"default", b"secret").is_some());
        assert!(acl.authenticate(b"default", b"nope").is_none());
        acl.set_default_password("");
        assert!(!acl.default_needs_auth());
    }

    #[test]
    fn the_check_picks_redis_s_refusal() {
        let cat = Catalog::get();
        let mut u = User::new("u", false);
        for op in ["+get", "~a*", "(+set ~b*)"] {
            u.apply(op.as_bytes(), false).unwrap();
        }
        let get = cat.id("get").unwrap();
        let set = cat.id("set").unwrap();
        assert_eq!(check(&u, get, &[b"get", b"ax"]), Ok(()));
        assert_eq!(check(&u, get, &[b"get", b"bx"]), Err(Denied::Key(1)));
        assert_eq!(check(&u, set, &[b"set", b"bx", b"1"]), Ok(()));
        assert_eq!(check(&u, set, &[b"set", b"ax", b"1"]), Err(Denied::Key(1)));
        let del = cat.id("del").unwrap();
        assert_eq!(check(&u, del, &[b"del", b"ax"]), Err(Denied::Command));
        let publish = cat.id("publish").unwrap();
        u.apply(b"+publish", false).unwrap();
        assert_eq!(
            check(&u, publish, &[b"publish", b"ch", b"m"]),
            Err(Denied::Channel(1))
        );
    }

    /// The per-command key plans find exactly the keys and access the metadata's general
    /// walk finds (`command::keys_of`), for every command and subcommand, over argument
    /// lists of every length up to 9 made of words that are keywords somewhere.
    #[test]
    fn key_plans_find_what_the_general_walk_finds() {
        let cat = Catalog::get();
        let words: [&[u8]; 6] = [b"k", b"GET", b"2", b"STREAMS", b"STORE", b"-1"];
        let mut compared = 0;
        for id in 0..cat.len() {
            let Some(m) = crate::engine::cmd::server::meta::table().get(&cat.names[id]) else {
                continue;
            };
            let name = cat.names[id].as_bytes();
            for len in 0..9usize {
                for rotate in 0..words.len() {
                    let mut args: Vec<&[u8]> = name.split(|&b| b == b'|').collect();
                    args.extend((0..len).map(|i| words[(i + rotate) % words.len()]));
                    let want: Vec<(usize, u8)> =
                        crate::engine::cmd::server::command::keys_of(m, &args)
                            .into_iter()
                            .filter(|(at, _)| *at < args.len())
                            .map(|(at, flags)| (at, catalog::need_of(flags)))
                            .collect();
                    let got = Request::new(id, &args).keys();
                    if let Some(need) = cat.single_key(id, &args) {
                        assert_eq!(
                            got,
                            [(1, need)],
                            "{}",
                            String::from_utf8_lossy(&args.concat())
                        );
                    }
                    assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&args.concat()));
                    compared += 1;
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
    }

    /// The fast path answers "allowed" exactly where the full check does, for every command
    /// whose one key is its first argument, under users with read-only, write-only, literal
    /// and glob patterns, denied commands and a second selector.
    #[test]
    fn the_fast_path_allows_exactly_what_the_check_allows() {
        let cat = Catalog::get();
        let users: Vec<User> = [
            &["+@all", "-@dangerous", "~key:*", "%R~ro:*"][..],
            &["+@read", "~*"],
            &["+get", "+set", "%W~w?", "~exact", "(+@write ~sel:*)"],
            &["allcommands", "resetkeys"],
        ]
        .iter()
        .map(|rules| {
            let mut u = User::new("u", false);
            for r in *rules {
                u.apply(r.as_bytes(), false).unwrap();
            }
            u
        })
        .collect();
        let keys: [&[u8]; 8] = [
            b"key:1", b"ro:1", b"w1", b"exact", b"sel:9", b"other", b"", b"key:",
        ];
        let mut fast = 0;
        for id in 0..cat.len() {
            let name = cat.names[id].clone();
            let words: Vec<&[u8]> = name.as_bytes().split(|&b| b == b'|').collect();
            for key in keys {
                for tail in [&[][..], &[&b"v"[..]][..], &[&b"v"[..], &b"GET"[..]][..]] {
                    let mut args = words.clone();
                    args.push(key);
                    args.extend_from_slice(tail);
                    if cat.single_key(id, &args).is_none() {
                        continue;
                    }
                    for u in &users {
                        let at_once = allowed_at_once(u, cat, id, &args);
                        let full = check(u, id, &args).is_ok();
                        assert_eq!(at_once, full, "{name} {args:?} under {}", u.describe());
                        fast += usize::from(at_once);
                    }
                }
            }
        }
        assert!(fast > 100, "{fast}");
    }
}
