//! CLIENT: the client's name and library attributes, CLIENT LIST and INFO lines, and the
//! rest of the subcommands real clients send (with CLIENT SETINFO and CLIENT NO-TOUCH from
//! 7.2, which client libraries send on connect).

use super::common::{err, err_owned, help, lossy, sub_arity, unknown_subcommand};
use crate::engine::client::Client;
use crate::engine::cmd::{is, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::resp::reply::Reply;

/// Client names and SETINFO values: printable ASCII without spaces, so CLIENT LIST stays
/// splittable on spaces.
fn valid_attr(value: &[u8]) -> bool {
    value.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

pub(super) fn set_name(client: &mut Client, name: &[u8]) -> Result<(), CmdError> {
    if !valid_attr(name) {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    client.name = (!name.is_empty()).then(|| name.to_vec());
    Ok(())
}

const CLIENT_HELP: &[&str] = &[
    "GETNAME",
    "    Return the name of the current connection.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "    * ID <id> [<id> ...]",
    "      Return clients of specified IDs only.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
];

fn on_off(arg: &[u8]) -> Result<bool, CmdError> {
    if is(arg, "on") {
        Ok(true)
    } else if is(arg, "off") {
        Ok(false)
    } else {
        Err(CmdError::Syntax)
    }
}

pub(super) fn client(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let c = &mut *ctx.client;
    if is(sub, "id") {
        sub_arity(args, 2, "client|id")?;
        Ok(Reply::Int(c.id as i64))
    } else if is(sub, "getname") {
        sub_arity(args, 2, "client|getname")?;
        Ok(Reply::opt_bulk(c.name.as_deref()))
    } else if is(sub, "setname") {
        sub_arity(args, 3, "client|setname")?;
        set_name(c, args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "info") {
        sub_arity(args, 2, "client|info")?;
        let mut line = client_info_line(c, "client|info");
        line.push('\n');
        Ok(Reply::Verbatim(line))
    } else if is(sub, "list") {
        sub_arity(args, -2, "client|list")?;
        client_list(c, args)
    } else if is(sub, "setinfo") {
        sub_arity(args, 4, "client|setinfo")?;
        client_setinfo(c, args[2], args[3])?;
        Ok(Reply::ok())
    } else if is(sub, "no-evict") {
        sub_arity(args, 3, "client|no-evict")?;
        c.no_evict = on_off(args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "no-touch") {
        sub_arity(args, 3, "client|no-touch")?;
        c.no_touch = on_off(args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "getredir") {
        sub_arity(args, 2, "client|getredir")?;
        Ok(Reply::Int(-1))
    } else if is(sub, "help") {
        sub_arity(args, 2, "client|help")?;
        Ok(help(args, CLIENT_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2); an empty value clears it.
fn client_setinfo(c: &mut Client, attr: &[u8], value: &[u8]) -> Result<(), CmdError> {
    let slot = if is(attr, "lib-name") {
        &mut c.lib_name
    } else if is(attr, "lib-ver") {
        &mut c.lib_ver
    } else {
        return Err(err_owned(format!(
            "ERR Unrecognized option '{}'",
            lossy(attr)
        )));
    };
    if !valid_attr(value) {
        return Err(err_owned(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            lossy(attr)
        )));
    }
    *slot = (!value.is_empty()).then(|| value.to_vec());
    Ok(())
}

/// CLIENT LIST [TYPE type | ID id ...]. The engine keeps no registry of other clients, so
/// the list holds the calling client only.
fn client_list(c: &Client, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let include_self = if args.len() == 4 && is(args[2], "type") {
        let t = args[3];
        if is(t, "normal") {
            true
        } else if ["master", "replica", "slave", "pubsub"]
            .iter()
            .any(|n| is(t, n))
        {
            false
        } else {
            return Err(err_owned(format!("ERR Unknown client type '{}'", lossy(t))));
        }
    } else if args.len() > 3 && is(args[2], "id") {
        let mut found = false;
        for id in &args[3..] {
            let id = parse_i64(id).map_err(|_| err("ERR Invalid client ID"))?;
            found |= id == c.id as i64;
        }
        found
    } else if args.len() != 2 {
        return Err(CmdError::Syntax);
    } else {
        true
    };
    let mut out = String::new();
    if include_self {
        out.push_str(&client_info_line(c, "client|list"));
        out.push('\n');
    }
    Ok(Reply::Verbatim(out))
}

/// One CLIENT INFO / CLIENT LIST line (without the newline), in Redis 7.2's layout; `cmd` is
/// the command being run. The engine tracks no buffers or descriptors: those fields are 0
/// (`fd=-1`), and `idle` is 0 (the client is running this command).
pub fn client_info_line(c: &Client, cmd: &str) -> String {
    let text = |v: &Option<Vec<u8>>| v.as_deref().map(lossy).unwrap_or_default();
    let addr = c.addr.as_deref().unwrap_or("");
    let mut flags = String::new();
    if c.in_multi() {
        flags.push('x');
    }
    if c.closing {
        flags.push('c');
    }
    if addr.starts_with('/') {
        flags.push('U');
    }
    if c.no_evict {
        flags.push('e');
    }
    if c.no_touch {
        flags.push('T');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let multi = c.multi.as_ref().map_or(-1, |q| q.len() as i64);
    format!(
        "id={id} addr={addr} laddr={laddr} fd=-1 name={name} age={age} idle=0 flags={flags} \
         db={db} sub=0 psub=0 ssub=0 multi={multi} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 \
         rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={cmd} user=default redir=-1 \
         resp={resp} lib-name={lib_name} lib-ver={lib_ver}",
        id = c.id,
        laddr = c.laddr.as_deref().unwrap_or(""),
        name = text(&c.name),
        age = c.created.elapsed().as_secs(),
        db = c.db,
        resp = c.resp,
        lib_name = text(&c.lib_name),
        lib_ver = text(&c.lib_ver),
    )
}
