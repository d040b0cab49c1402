//! TLS to PostgreSQL: the suite's cluster is given a certificate signed by
//! a CA of the test's own (generated with the `openssl` command), and the
//! store reaches it with `sslmode=verify-full` and that CA as
//! `sslrootcert`, over TLS, and refuses it without the CA or with
//! another.
//!
//! Turning TLS on changes the whole cluster, so the test runs only on one
//! whose clients say `sslmode=disable` (`cargo xtask postgres`'s throw-away
//! cluster): they stay unencrypted meanwhile, whatever the cluster offers.

use std::path::Path;
use std::process::Command;

use seri_core::AgentId;
use seri_store::{Store, StoreOptions};

use crate::support::{fresh_schema_url, postgres_url};

/// Runs `sql` on `url` without TLS; what the server said when it refused.
fn raw(url: &str, sql: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
        let driver = tokio::spawn(connection);
        let result = client
            .batch_execute(sql)
            .await
            .map_err(|e| e.as_db_error().map_or_else(|| e.to_string(), |db| db.message().to_owned()));
        drop(client);
        let _ = driver.await;
        result
    })
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").args(args).current_dir(dir).output().expect("the openssl command");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A CA (`<name>.crt`, `<name>.key`) in `dir`.
fn make_ca(dir: &Path, name: &str) {
    let (crt, key) = (format!("{name}.crt"), format!("{name}.key"));
    let subject = format!("/CN=seri test {name}");
    openssl(dir, &["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", &key]);
    openssl(dir, &["req", "-x509", "-new", "-key", &key, "-out", &crt, "-days", "2", "-subj", &subject]);
}

/// The cluster's data directory, as the server names it.
fn data_directory(url: &str) -> std::path::PathBuf {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
        let driver = tokio::spawn(connection);
        let row = client.query_one("SELECT current_setting('data_directory')", &[]).await.unwrap();
        let dir: String = row.get(0);
        drop(client);
        let _ = driver.await;
        std::path::PathBuf::from(dir)
    })
}

/// Copies `from` into the cluster's data directory as `name`, owned by the
/// server's user with mode 0600, as PostgreSQL wants of a key file (the
/// cluster is on this machine; run as root, the server runs as `postgres`).
fn give_server(data: &Path, from: &Path, name: &str) {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let to = data.join(name);
    std::fs::copy(from, &to).unwrap();
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).unwrap();
    let owner = std::fs::metadata(data).unwrap();
    std::os::unix::fs::chown(&to, Some(owner.uid()), Some(owner.gid())).unwrap();
}

/// Sets a server setting and has the server read it (`ALTER SYSTEM` runs
/// outside a transaction: one statement per call).
fn set(url: &str, setting: &str) {
    raw(url, &format!("ALTER SYSTEM {setting}")).unwrap();
    raw(url, "SELECT pg_reload_conf()").unwrap();
}

/// Waits until new connections see `ssl` as `want` (a reload is not instant).
fn wait_for_ssl(url: &str, want: &str) {
    let check =
        format!("DO $$ BEGIN IF current_setting('ssl') <> '{want}' THEN RAISE EXCEPTION 'not yet'; END IF; END $$");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while let Err(e) = raw(url, &check) {
        assert!(std::time::Instant::now() < deadline, "ssl never became {want}: {e}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn open(url: &str) -> seri_store::Result<Store> {
    Store::open_url(Some(url), Path::new("unused.db"), StoreOptions::default())
}

#[test]
fn a_cluster_with_a_self_signed_certificate_is_reached_with_verify_full_and_its_ca() {
    let Some(base) = postgres_url() else { return };
    if !base.contains("sslmode=disable") {
        eprintln!(
            "skipped: this test turns TLS on in the whole cluster, which only one whose clients say \
             sslmode=disable may take (cargo xtask postgres test starts one)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    make_ca(dir.path(), "ca");
    make_ca(dir.path(), "stranger");
    // The server's certificate, for the address the suite reaches it at.
    openssl(dir.path(), &["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "server.key"]);
    openssl(dir.path(), &["req", "-new", "-key", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]);
    std::fs::write(dir.path().join("ext.cnf"), "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(
        dir.path(),
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
    let data = data_directory(&base);
    give_server(&data, &dir.path().join("server.crt"), "seri-test-server.crt");
    give_server(&data, &dir.path().join("server.key"), "seri-test-server.key");
    set(&base, "SET ssl_cert_file = 'seri-test-server.crt'");
    set(&base, "SET ssl_key_file = 'seri-test-server.key'");
    set(&base, "SET ssl = on");
    wait_for_ssl(&base, "on");

    let result = std::panic::catch_unwind(|| {
        let ca = dir.path().join("ca.crt");
        let with = |params: &str| fresh_schema_url(&base.replace("sslmode=disable", params));
        let verified =
            with(&format!("sslmode=verify-full&sslrootcert={}&application_name=seri-tls-test", ca.display()));
        let store = open(&verified).unwrap();
        let agent = store.agent(&AgentId::local());
        let seed = agent.new_seed("/w");
        agent.create_session(&seed).unwrap();
        assert_eq!(agent.info(seed.id).unwrap().id, seed.id);
        // The server sees the store's connection encrypted.
        raw(
            &base,
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE s.ssl AND a.application_name = 'seri-tls-test') THEN RAISE EXCEPTION 'no TLS connection'; END IF; END $$",
        )
        .unwrap();
        drop(store);

        // Without the CA the certificate is nobody's; with another CA, not theirs.
        for refused in [
            with("sslmode=verify-full"),
            with(&format!("sslmode=verify-full&sslrootcert={}", dir.path().join("stranger.crt").display())),
        ] {
            let error = open(&refused).map(drop).unwrap_err().to_string();
            assert!(error.to_lowercase().contains("certificate"), "a certificate it cannot trust: {error}");
        }
        let missing = with("sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
        let error = open(&missing).map(drop).unwrap_err().to_string();
        assert!(error.contains("sslrootcert /nonexistent/ca.pem"), "{error}");
        let error = open(&with("sslmode=verify-ca")).map(drop).unwrap_err().to_string();
        assert!(error.contains("sslmode=verify-full"), "{error}");
    });

    // The cluster as it was, for whatever runs next.
    set(&base, "RESET ssl");
    set(&base, "RESET ssl_cert_file");
    set(&base, "RESET ssl_key_file");
    wait_for_ssl(&base, "off");
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
