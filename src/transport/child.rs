//! The processes edgebench starts beside itself (redis-servers, brokers): finding their
//! binary, a free port for them, and the promise that each dies with edgebench.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// `program` in a directory of `PATH`, if one holds it executable.
pub fn find_on_path(program: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

/// A regular file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A port that was free a moment ago: bind port 0, read what the kernel chose, release it.
pub fn free_port() -> io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

/// Makes the child `cmd` spawns die (SIGKILL) when the spawning thread's process goes away,
/// and refuse to start when that already happened: `PR_SET_PDEATHSIG`, set in the child
/// before exec. PDEATHSIG follows the spawning *thread*: spawn from one that lives as long
/// as the child should. Shared by spawned redis-servers, brokers and the tests' helper
/// servers.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe calls (prctl, getppid), without allocating.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect: then nobody owns us.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Stops a child: SIGTERM, then SIGKILL if it still runs after `grace`, and reaps it (no
/// zombie). A child already reaped is left alone: its pid may belong to another process now.
pub fn stop(child: &mut Child, grace: Duration) {
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    // SAFETY: kill(2) on our own child, not reaped yet (checked above), has no memory effects.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            _ => return,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}
