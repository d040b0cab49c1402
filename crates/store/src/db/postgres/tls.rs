//! TLS to PostgreSQL, as the store's URL asks: libpq's `sslmode` and
//! `sslrootcert`, over rustls (ring), which the workspace builds already.
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (the default) | when the server offers it | verified, host name included |
//! | `require`, `verify-full` | always | verified, host name included |
//!
//! A certificate is verified against `sslrootcert` (a PEM file of CA
//! certificates, such as a cluster's self-signed one) when the URL names
//! one, else against the platform's roots. Unlike libpq, `require` and
//! `prefer` verify too: rustls does not talk to a server it cannot
//! identify. `verify-ca` (the chain but not the host name) is refused
//! rather than quietly checked more strictly than asked.

use std::path::{Path, PathBuf};

use tokio_postgres::Config;
use tokio_postgres::config::SslMode;

use crate::error::{DatabaseError, OpenError, Result, StoreError};

/// The URL's TLS parameters that tokio-postgres does not read itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsParams {
    /// `sslmode=verify-full`.
    pub(crate) verify_full: bool,
    /// `sslrootcert=<file>`.
    pub(crate) root_cert: Option<PathBuf>,
}

/// `url` without the parameters tokio-postgres would refuse
/// (`sslmode=verify-full|verify-ca`, `sslrootcert`), and those parameters.
/// Both forms are read: `postgres://…?sslmode=verify-full&sslrootcert=ca.pem`
/// and `host=… sslmode=verify-full sslrootcert=ca.pem`.
pub(crate) fn split(url: &str) -> std::result::Result<(String, TlsParams), String> {
    let mut params = TlsParams::default();
    let mut take = |key: &str, value: &str| -> std::result::Result<bool, String> {
        match (key, value) {
            ("sslmode", "verify-full") => params.verify_full = true,
            ("sslmode", "verify-ca") => {
                return Err("sslmode=verify-ca is not supported: use sslmode=verify-full, which checks the \
                            certificate's chain and the host name"
                    .into());
            }
            ("sslrootcert", file) if !file.is_empty() => params.root_cert = Some(PathBuf::from(file)),
            ("sslrootcert", _) => return Err("sslrootcert names no file".into()),
            _ => return Ok(false),
        }
        Ok(true)
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else { return Ok((url.to_owned(), params)) };
        let mut kept = Vec::new();
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode(value);
            if !take(key, &value)? {
                kept.push(pair);
            }
        }
        let rest = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
        return Ok((rest, params));
    }
    let mut kept = Vec::new();
    for word in url.split_whitespace() {
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        if !take(key.trim(), value.trim().trim_matches('\''))? {
            kept.push(word);
        }
    }
    Ok((kept.join(" "), params))
}

/// `%XX` escapes of a URL's query value decoded (a file name may carry them).
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The connection settings and TLS connector `url` asks for.
pub(crate) fn configure(url: &str) -> Result<(Config, tokio_postgres_rustls::MakeRustlsConnect)> {
    let bad =
        |problem: String| StoreError::Open(OpenError::BadStoreUrl { url: super::connection::redact(url), problem });
    let (rest, params) = split(url).map_err(bad)?;
    let mut config: Config = rest.parse().map_err(|e: tokio_postgres::Error| bad(e.to_string()))?;
    if params.verify_full {
        config.ssl_mode(SslMode::Require);
    }
    let connector = match &params.root_cert {
        Some(file) => with_roots(file).map_err(bad)?,
        None => platform()?,
    };
    Ok((config, connector))
}

/// Verifies against the CA certificates in `file` (PEM).
fn with_roots(file: &Path) -> std::result::Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let unreadable = |e: &dyn std::fmt::Display| format!("cannot read sslrootcert {}: {e}", file.display());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(file).map_err(|e| unreadable(&e))? {
        let cert = cert.map_err(|e| unreadable(&e))?;
        roots
            .add(cert)
            .map_err(|e| format!("sslrootcert {} holds a certificate rustls refuses: {e}", file.display()))?;
    }
    if roots.is_empty() {
        return Err(format!("sslrootcert {} holds no PEM certificate", file.display()));
    }
    let config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// Verifies against the platform's roots.
fn platform() -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    use rustls_platform_verifier::ConfigVerifierExt;
    // An `Err` means a provider is already installed, which is all we need.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = rustls::ClientConfig::with_platform_verifier().map_err(|e| {
        StoreError::Open(OpenError::Open { path: PathBuf::from("postgres"), source: DatabaseError::new(e) })
    })?;
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_parameters_are_taken_out_of_either_form() {
        let (rest, params) = split(
            "postgres://seri@db:5432/x?sslmode=verify-full&options=-csearch_path%3Ds&sslrootcert=%2Ftmp%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgres://seri@db:5432/x?options=-csearch_path%3Ds");
        assert_eq!(params, TlsParams { verify_full: true, root_cert: Some(PathBuf::from("/tmp/ca.pem")) });
        let (rest, params) = split("host=db user=seri sslmode=verify-full sslrootcert=/ca.pem").unwrap();
        assert_eq!(rest, "host=db user=seri");
        assert_eq!(params.root_cert, Some(PathBuf::from("/ca.pem")));
        let (rest, params) = split("postgres://seri@db/x?sslmode=require").unwrap();
        assert_eq!((rest.as_str(), params), ("postgres://seri@db/x?sslmode=require", TlsParams::default()));
        let refused = split("postgres://db/x?sslmode=verify-ca").unwrap_err();
        assert!(refused.contains("verify-full"), "{refused}");
    }
}
