//! A private PostgreSQL for one test, in secure mode: made with the installed `initdb` in a
//! temp directory, started on a free port with `ssl = on` and certificates from
//! [`edgebench::transport::certs`], a superuser with a scram-sha-256 password, and a
//! `pg_hba.conf` that accepts only `hostssl` with that password (plain `host` connections
//! are rejected). It listens on 127.0.0.1 and 127.0.0.2, an address its certificate does
//! not name, for the tests of host-name checking. The machine's shared PostgreSQL is not touched.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: then `initdb` and `postgres` run
//! as the `postgres` system user the Debian package creates, and the directory is handed to
//! it. The server dies with the test: it is spawned with `PR_SET_PDEATHSIG` (a killed test
//! process takes it along) and [`PrivatePg`]'s `Drop` stops it (a failed assertion unwinds
//! through it).

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use edgebench::transport::certs::{CertFiles, PrivateCa};
use edgebench::transport::child::{free_port, stop};

/// The superuser the tests connect as, and its password.
pub const USER: &str = "edgebench_tls";
pub const PASSWORD: &str = "pg-s3cret";

/// A loaded CI machine can take a while to run initdb and start the server.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// `postgres` exits within a second of SIGINT (fast shutdown); then SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A running private PostgreSQL; stopped when dropped.
pub struct PrivatePg {
    child: Child,
    port: u16,
    certs: CertFiles,
    // Last: removed after the server has stopped.
    _dir: tempfile::TempDir,
}

impl PrivatePg {
    /// Makes and starts one. Panics with the fix when PostgreSQL is not installed: the tests
    /// that need it fail rather than skip.
    pub fn start() -> PrivatePg {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("edgebench-pg-tls-")
            .tempdir()
            .unwrap();
        let certs = PrivateCa::new().unwrap().write_files(dir.path()).unwrap();
        let data = dir.path().join("data");
        let pwfile = dir.path().join("pwfile");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        let owner = server_user();
        if let Some((uid, gid)) = owner {
            chown_tree(dir.path(), uid, gid);
        }
        let out = as_owner(Command::new(bin.join("initdb")), owner)
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                USER,
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--no-sync",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(
            data.join("pg_hba.conf"),
            "hostssl all all 127.0.0.0/8 scram-sha-256\n\
             hostssl all all ::1/128 scram-sha-256\n\
             host all all 0.0.0.0/0 reject\n\
             host all all ::/0 reject\n",
        )
        .unwrap();
        let port = free_port().unwrap();
        let mut cmd = as_owner(super::child(bin.join("postgres")), owner);
        cmd.arg("-D")
            .arg(&data)
            .args([
                "-p",
                &port.to_string(),
                "-c",
                "listen_addresses=127.0.0.1,127.0.0.2",
            ])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", dir.path().display()))
            .args([
                "-c",
                "ssl=on",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=40",
            ])
            .arg("-c")
            .arg(format!("ssl_cert_file={}", certs.server_cert.display()))
            .arg("-c")
            .arg(format!("ssl_key_file={}", certs.server_key.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().unwrap();
        let mut pg = PrivatePg {
            child,
            port,
            certs,
            _dir: dir,
        };
        pg.wait_ready(&bin);
        pg
    }

    /// `postgres://USER:PASSWORD@127.0.0.1:PORT/postgres` with `query` (`sslmode=…`) appended.
    pub fn url(&self, query: &str) -> String {
        let mut url = format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        );
        if !query.is_empty() {
            url.push('?');
            url.push_str(query);
        }
        url
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The CA and the certificates the server uses.
    pub fn certs(&self) -> &CertFiles {
        &self.certs
    }

    fn wait_ready(&mut self, bin: &Path) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the private postgres exited during startup ({status})");
            }
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the private postgres did not accept connections within {}s",
                START_TIMEOUT.as_secs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        // SIGINT is PostgreSQL's fast shutdown: it does not wait for clients to leave.
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: kill(2) on our own child, not reaped yet (checked above).
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
            }
        }
        stop(&mut self.child, STOP_GRACE);
    }
}

/// The newest installed PostgreSQL's binaries (Debian: /usr/lib/postgresql/VERSION/bin).
fn bin_dir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).unwrap_or_else(|| {
        panic!(
            "no PostgreSQL in /usr/lib/postgresql/*/bin: install it (apt-get install \
             postgresql); the TLS tests fail rather than skip without it"
        )
    })
}

/// The uid and gid to run PostgreSQL as when we are root (it refuses root): the `postgres`
/// user's. `None` when we are not root.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = CString::new("postgres").unwrap();
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: a zeroed `passwd` is a valid value for getpwnam_r to fill in.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; `buf` outlives the uses of `pwd`.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    assert!(
        rc == 0 && !result.is_null(),
        "running as root, and there is no `postgres` user to run the private PostgreSQL as \
         (PostgreSQL refuses root): install Debian's postgresql package, which creates it"
    );
    let (uid, gid) = (pwd.pw_uid, pwd.pw_gid);
    Some((uid, gid))
}

fn as_owner(mut cmd: Command, owner: Option<(u32, u32)>) -> Command {
    if let Some((uid, gid)) = owner {
        cmd.uid(uid).gid(gid);
    }
    cmd
}

fn chown_tree(path: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid, gid);
        }
    }
}
