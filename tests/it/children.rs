//! Every process edgebench starts dies with it, whatever ends it: a SIGKILL of edgebench in
//! the middle of a run (no handler runs, no destructor) leaves none of its spawned servers
//! behind. Each spawned kind is checked: a `redis-server` with a replica (two processes, the
//! replica started for the primary) and a Redis Cluster (a primary and its replica, each a
//! process of its own). They carry `PR_SET_PDEATHSIG` (`transport::child::die_with_parent`);
//! a spawned kind added later (a broker, a private database server) joins the table below.

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
        let mut child = crate::common::edgebench()
            .args(["coredata", "--target", target])
            .args(extra)
            .args(["--bench", "^EventCount$", "--benchtime", "120s", "--out"])
            .arg(dir.path().join("run"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
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
        // SAFETY: plain kill(2) on our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&child.wait().unwrap()),
            Some(libc::SIGKILL)
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while servers.iter().any(|&s| alive(s, "redis-server")) {
            assert!(
                Instant::now() < deadline,
                "{target}: redis-servers {servers:?} outlived edgebench's SIGKILL by 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
