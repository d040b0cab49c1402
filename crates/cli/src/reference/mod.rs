//! The book's reference pages (`docs/src/reference/`), generated from the
//! code they describe and checked fresh by the tests here, the way
//! `crates/server/openapi.json` is by the server's: a page that no longer
//! says what the code does fails `cargo test`, and so does a flag, a
//! `config.json` key, a hook event or a hook input field without words of
//! its own. `SERI_UPDATE_REFERENCE=1 cargo test -p seri --bin seri
//! reference` writes them again; read the diff, and commit it.

mod api;
mod cli;
mod config;
mod hooks;
mod slash;

use std::path::{Path, PathBuf};

/// Set to `1`, the tests write the pages instead of comparing them.
const UPDATE_ENV: &str = "SERI_UPDATE_REFERENCE";

/// Where a page lives.
fn page_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/reference").join(name)
}

/// The title and the line saying where a page comes from.
fn header(title: &str, source: &str) -> String {
    format!(
        "# {title}\n\n<!-- Generated from {source} by `cargo test -p seri --bin seri reference`: do not edit. \
         `SERI_UPDATE_REFERENCE=1 cargo test -p seri --bin seri reference` writes it again. -->\n\n"
    )
}

/// Compares `expected` with the committed page, or writes it under
/// `SERI_UPDATE_REFERENCE=1`.
fn check_fresh(name: &str, expected: &str) {
    let path = page_path(name);
    if std::env::var_os(UPDATE_ENV).is_some_and(|v| v == "1") {
        std::fs::write(&path, expected).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "docs/src/reference/{name} is stale: run `{UPDATE_ENV}=1 cargo test -p seri --bin seri reference`, \
         read the diff and commit it"
    );
}

/// Text as one table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// `items` as inline code, comma-separated.
fn codes<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    items.into_iter().map(|i| format!("`{}`", i.as_ref())).collect::<Vec<_>>().join(", ")
}

#[test]
fn cell_keeps_a_table_whole() {
    assert_eq!(cell("a |  b\n  c"), "a \\| b c");
    assert_eq!(codes(["x", "y"]), "`x`, `y`");
}
