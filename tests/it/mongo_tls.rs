//! MongoDB with `tls=true` (issue 30): SecantusDB serves TLS (`--tls-cert-file`,
//! `--tls-key-file`), so the driver's rustls client is tested against it: a run stores and
//! reads back under the column `MongoDB+TLS`, and a CA that did not sign the server's
//! certificate, or a plain client, is refused with one line naming the target.

use crate::common::mongo::TlsServer;

#[test]
fn coredata_over_tls_runs_and_a_foreign_ca_or_plain_text_is_refused() {
    let server = TlsServer::start();
    let other = tempfile::tempdir().unwrap();
    let other_ca = edgebench::transport::certs::PrivateCa::new()
        .unwrap()
        .write_files(other.path())
        .unwrap();
    let secure = server.url("");
    let foreign = format!(
        "mongodb://127.0.0.1:{}/?tls=true&tlsCAFile={}&serverSelectionTimeoutMS=2000",
        server.port(),
        other_ca.ca_cert.display()
    );
    let plain = format!(
        "mongodb://127.0.0.1:{}/?serverSelectionTimeoutMS=2000",
        server.port()
    );
    let targets = format!("{secure},foreign={foreign},plain={plain}");
    let (dir, code, stdout, stderr) = crate::common::store_and_read_back(&targets);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stdout.starts_with(
            "| Benchmark | MongoDB+TLS (micro/op) | MongoDB+TLS_EdgeX4 (micro/op) |\n"
        ),
        "{stdout}"
    );
    for (name, fix) in [
        ("foreign", "give the CA that signed it, tlsCAFile=FILE"),
        ("plain", "add tls=true&tlsCAFile=FILE to the URL"),
    ] {
        let failure = stderr
            .lines()
            .find(|l| l.starts_with(&format!("edgebench: target {name}: ")))
            .unwrap_or_else(|| panic!("no failure for {name}: {stderr}"));
        assert!(
            failure.contains("cannot reach MongoDB at mongodb://127.0.0.1:"),
            "{failure}"
        );
        assert!(failure.contains(fix), "{failure}");
    }
    crate::common::ran_all_three(dir.path(), &["MongoDB+TLS", "MongoDB+TLS_EdgeX4"]);
}
