//! Every process edgebench starts dies with it, whatever ends it: a SIGKILL of edgebench in
//! the middle of a run (no handler runs, no destructor) leaves none of its spawned servers
//! behind. Each spawned kind is checked: a `redis-server` with a replica (two processes, the
//! replica started for the primary) and a Redis Cluster (a primary and its replica, each a
//! process of its own), and the brokers of `fleet --via bus` (Mosquitto, nats-server, a
//! redis-server for Pub/Sub). They carry `PR_SET_PDEATHSIG` (`transport::child::die_with_parent`);
//! a spawned kind added later (a private database server) joins the tables below.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::cli::children_named;

/// Whether `pid` is still a live process named `name` (gone, reused by another program, or a
/// zombie waiting for its reaper all count as dead).
fn alive(pid: i32, name: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some((comm_part, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let comm = comm_part.split_once('(').map(|(_, c)| c).unwrap_or("");
    let state = rest.split_whitespace().next().unwrap_or("");
    comm == name && state != "Z" && state != "X"
}

/// `edgebench ARGS --out DIR/run`, its output discarded.
fn quiet(args: &[&str], dir: &std::path::Path) -> std::process::Child {
    crate::common::edgebench()
        .args(args)
        .arg("--out")
        .arg(dir.join("run"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// SIGKILLs edgebench (`child`) and waits up to 10 s for every one of `pids` (processes named
/// `name` it spawned for `case`) to be gone.
fn sigkill_leaves_none(child: &mut std::process::Child, pids: &[i32], name: &str, case: &str) {
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&child.wait().unwrap()),
        Some(libc::SIGKILL)
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p, name)) {
        assert!(
            Instant::now() < deadline,
            "{case}: {name} {pids:?} outlived edgebench's SIGKILL by 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_sigkill_of_edgebench_leaves_no_spawned_process_behind() {
    // (--target, extra flags, how many redis-servers edgebench spawns for it)
    let cases: [(&str, &[&str], usize); 2] = [
        ("redis-uds?replicas=1", &[], 2),
        (
            "redis-cluster",
            &["--cluster-shards", "1", "--cluster-replicas", "1"],
            2,
        ),
    ];
    for (target, extra, spawned) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["coredata", "--target", target];
        args.extend_from_slice(extra);
        args.extend(["--bench", "^EventCount$", "--benchtime", "120s"]);
        let mut child = quiet(&args, dir.path());
        let pid = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(60);
        let servers = loop {
            let servers = children_named(pid, "redis-server");
            if servers.len() == spawned {
                break servers;
            }
            assert!(
                Instant::now() < deadline,
                "{target}: {} of {spawned} redis-servers after 60 s",
                servers.len()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        // Into the run: the servers are up (a cluster assembled) and EventCount measuring
        // (it prints nothing until its 120 s end, so there is no line to wait for).
        std::thread::sleep(Duration::from_secs(3));
        assert!(
            child.try_wait().unwrap().is_none(),
            "{target}: edgebench ended early"
        );
        sigkill_leaves_none(&mut child, &servers, "redis-server", target);
    }
}

#[test]
fn a_sigkill_of_edgebench_leaves_no_spawned_broker_behind() {
    crate::common::require_redis_server();
    // (--bus, the process edgebench spawns for it)
    for (bus, program) in [
        ("mqtt-uds", "mosquitto"),
        ("nats", "nats-server"),
        ("redis-pubsub-tcp", "redis-server"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "fleet",
            "--via",
            "bus",
            "--bus",
            bus,
            "--events-per-second",
            "10",
        ];
        let mut child = quiet(&[&args[..], &["--duration", "120s"]].concat(), dir.path());
        let pid = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(30);
        let brokers = loop {
            let found = children_named(pid, program);
            if !found.is_empty() {
                break found;
            }
            assert!(Instant::now() < deadline, "{bus}: no {program} after 30 s");
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_secs(1));
        assert!(
            child.try_wait().unwrap().is_none(),
            "{bus}: edgebench ended early"
        );
        sigkill_leaves_none(&mut child, &brokers, program, bus);
    }
}
