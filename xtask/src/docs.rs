//! The book (`docs/`): `cargo xtask docs` builds it with mdBook into
//! `target/book` and checks every link and anchor in it, offline;
//! `cargo xtask docs --open` opens it; `cargo xtask ci` runs the build and
//! the check as a step.
//!
//! - mdBook is pinned ([`MDBOOK`]) and installed by cargo from crates.io the
//!   first time (`cargo install mdbook --locked --no-default-features
//!   --features search`, a few minutes on two cores), into a folder named
//!   after its version under seri's tool cache (`$XDG_CACHE_HOME/seri`, else
//!   `~/.cache/seri`, as `llama.rs` keeps llama-server), outside the
//!   checkout; later runs only check that it is there.
//! - The check reads the built HTML: every `href` that is not a URL must
//!   name a file, and its `#fragment` an `id` in that page, the ids mdBook
//!   gives headings included. A link out of the book (to a source file,
//!   `../../../crates/…`) is resolved from the page's source in `docs/src`,
//!   which sits as deep below the root as `target/book` does, and must name
//!   a file of the repository. `README.md`'s and `ARCHITECTURE.md`'s links
//!   into the book are checked the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// The mdBook release the book is built with.
const MDBOOK: &str = "0.4.52";

/// Its features: the book's search, without the file watcher and the
/// web server, which `cargo xtask docs` does not use.
const FEATURES: &str = "search";

/// `cargo xtask docs [--open]`.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let open = match args {
        [] => false,
        [flag] if flag == "--open" => true,
        _ => return Err("usage: cargo xtask docs [--open]".to_owned()),
    };
    let index = build(root)?;
    if open {
        let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
        let opened = Command::new(opener).arg(&index).stdin(Stdio::null()).status().is_ok_and(|s| s.success());
        if !opened {
            println!("xtask docs: open {} in a browser", index.display());
        }
    }
    Ok(())
}

/// Builds the book and checks its links; returns its `index.html`.
pub(crate) fn build(root: &Path) -> Result<PathBuf, String> {
    let mdbook = ensure_mdbook()?;
    println!("xtask docs: {} build docs", mdbook.display());
    let out = root.join("target/book");
    // A page removed from the book must not linger as a link target.
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|e| format!("cannot clear {}: {e}", out.display()))?;
    }
    let status = Command::new(&mdbook)
        .args(["build", "docs"])
        .current_dir(root)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run {}: {e}", mdbook.display()))?;
    if !status.success() {
        return Err(format!("mdbook build failed ({status})"));
    }
    let problems = check_links(root, &out)?;
    if !problems.is_empty() {
        return Err(format!("the book has broken links:\n  {}", problems.join("\n  ")));
    }
    println!("xtask docs: every link and anchor resolves; the book is {}", out.join("index.html").display());
    Ok(out.join("index.html"))
}

/// mdBook at [`MDBOOK`], installed into the tool cache when missing.
fn ensure_mdbook() -> Result<PathBuf, String> {
    let dir = crate::llama::cache_root()?.join(format!("mdbook-{MDBOOK}-{FEATURES}"));
    let binary = dir.join("bin/mdbook");
    if binary.is_file() {
        return Ok(binary);
    }
    println!("xtask docs: installing mdBook {MDBOOK} into {} (once)", dir.display());
    let started = std::time::Instant::now();
    let status = Command::new(crate::cargo())
        .args(["install", "mdbook", "--locked", "--no-default-features", "--features", FEATURES, "--version", MDBOOK])
        .arg("--root")
        .arg(&dir)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run cargo install: {e}"))?;
    if !status.success() || !binary.is_file() {
        return Err(format!("cargo install mdbook {MDBOOK} failed ({status})"));
    }
    println!("xtask docs: mdBook installed in {:.0} s", started.elapsed().as_secs_f64());
    Ok(binary)
}

/// Every broken link of the built book at `out`, and of the root's
/// markdown files that link into it.
fn check_links(root: &Path, out: &Path) -> Result<Vec<String>, String> {
    let mut pages = Vec::new();
    crate::walk(out, &mut |path| {
        if path.extension().is_some_and(|e| e == "html") {
            pages.push(path.to_path_buf());
        }
    });
    let mut ids: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut texts = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).map_err(|e| format!("cannot read {}: {e}", page.display()))?;
        ids.insert(page.clone(), attributes(&text, "id").into_iter().collect());
        texts.push((page.clone(), text));
    }
    let mut problems = Vec::new();
    for (page, text) in &texts {
        // print.html repeats every page with its links rewritten, and the
        // 404 page is served from anywhere: their links are the pages'.
        let name = page.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if matches!(name, "print.html" | "404.html" | "toc.html") {
            continue;
        }
        let from = page.strip_prefix(out).unwrap_or(page).display().to_string();
        for href in attributes(text, "href") {
            if let Some(problem) = check_href(root, out, page, &href, &ids) {
                problems.push(format!("{from}: {href}: {problem}"));
            }
        }
    }
    for file in ["README.md", "ARCHITECTURE.md"] {
        let text = std::fs::read_to_string(root.join(file)).map_err(|e| format!("cannot read {file}: {e}"))?;
        for target in markdown_links(&text) {
            if let Some(problem) = check_root_link(root, out, &target, &ids) {
                problems.push(format!("{file}: {target}: {problem}"));
            }
        }
    }
    Ok(problems)
}

/// What is wrong with `href` on the built `page`, if anything.
fn check_href(
    root: &Path,
    out: &Path,
    page: &Path,
    href: &str,
    ids: &BTreeMap<PathBuf, BTreeSet<String>>,
) -> Option<String> {
    if is_url(href) {
        return None;
    }
    let (path, fragment) = href.split_once('#').unwrap_or((href, ""));
    let dir = page.parent().unwrap_or(out);
    let target = if path.is_empty() { page.to_path_buf() } else { normalize(&dir.join(path)) };
    if !target.starts_with(out) {
        // Out of the book: a file of the repository, seen from the page's source.
        let source_dir = root.join("docs/src").join(dir.strip_prefix(out).unwrap_or(Path::new("")));
        let file = normalize(&source_dir.join(path));
        // mdBook writes a link to `X.md` as `X.html`, outside the book too.
        let source =
            if file.extension().is_some_and(|e| e == "html") { file.with_extension("md") } else { file.clone() };
        let found = file.starts_with(root) && (file.exists() || source.exists());
        return (!found).then(|| format!("{} does not exist", source.display()));
    }
    let target = if target.is_dir() { target.join("index.html") } else { target };
    if !target.exists() {
        return Some("no such page".to_owned());
    }
    if fragment.is_empty() || target.extension().is_none_or(|e| e != "html") {
        return None;
    }
    let known = ids.get(&target).is_some_and(|ids| ids.contains(fragment));
    (!known).then(|| format!("no heading or element with id `{fragment}` in {}", target.display()))
}

/// What is wrong with a link of a markdown file at the root, if anything:
/// its file must exist, and a fragment on a book page must be an id there.
fn check_root_link(root: &Path, out: &Path, target: &str, ids: &BTreeMap<PathBuf, BTreeSet<String>>) -> Option<String> {
    if is_url(target) || target.starts_with('#') {
        return None;
    }
    let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
    let file = normalize(&root.join(path));
    if !file.exists() {
        return Some("no such file".to_owned());
    }
    let Ok(in_book) = file.strip_prefix(root.join("docs/src")) else { return None };
    if fragment.is_empty() {
        return None;
    }
    let built = out.join(in_book).with_extension("html");
    let known = ids.get(&built).is_some_and(|ids| ids.contains(fragment));
    (!known).then(|| format!("no heading with id `{fragment}` in {}", built.display()))
}

fn is_url(link: &str) -> bool {
    link.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// Every value of `name="…"` in an HTML text, entities for `&` undone.
fn attributes(html: &str, name: &str) -> Vec<String> {
    let needle = format!(" {name}=\"");
    let mut values = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&needle) {
        rest = &rest[at + needle.len()..];
        let Some(end) = rest.find('"') else { break };
        values.push(rest[..end].replace("&amp;", "&"));
        rest = &rest[end..];
    }
    values
}

/// The targets of `[text](target)` links in markdown, code spans and
/// fenced blocks left out.
fn markdown_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                links.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    links
}

/// `path` with `.` and `..` taken out, without asking the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_and_links_are_read_and_paths_normalized() {
        let html =
            r#"<a href="a.html#x">a</a><h2 id="x">X</h2><a href="https://e.org">e</a><a href="?a=1&amp;b">q</a>"#;
        assert_eq!(attributes(html, "href"), ["a.html#x", "https://e.org", "?a=1&b"]);
        assert_eq!(attributes(html, "id"), ["x"]);
        let md = "see [a](docs/src/a.md#b) and `[not](a link)`\n```\n[no](x)\n```\n[c](README.md)";
        assert_eq!(markdown_links(md), ["docs/src/a.md#b", "README.md"]);
        assert_eq!(normalize(Path::new("/r/target/book/guide/../../../crates/x.rs")), Path::new("/r/crates/x.rs"));
        assert!(is_url("https://e.org") && is_url("mailto:a@b") && !is_url("../a.md") && !is_url("#x"));
    }

    #[test]
    fn a_broken_link_or_anchor_is_found_and_a_good_one_is_not() {
        let dir = std::env::temp_dir().join(format!("xtask-docs-{}", std::process::id()));
        let out = dir.join("target/book");
        std::fs::create_dir_all(out.join("guide")).unwrap();
        std::fs::create_dir_all(dir.join("docs/src/guide")).unwrap();
        std::fs::create_dir_all(dir.join("crates")).unwrap();
        std::fs::write(dir.join("crates/x.rs"), "").unwrap();
        std::fs::write(
            out.join("guide/a.html"),
            r##"<h1 id="top">A</h1><a href="b.html#there">b</a><a href="b.html#gone">b</a><a href="c.html">c</a>
               <a href="#top">top</a><a href="#nope">nope</a><a href="../../../crates/x.rs">x</a><a href="../../../crates/y.rs">y</a>"##,
        )
        .unwrap();
        std::fs::write(out.join("guide/b.html"), r#"<h2 id="there">B</h2>"#).unwrap();
        std::fs::write(dir.join("README.md"), "[a](docs/src/guide/a.md#top) [b](docs/src/guide/b.md#nowhere)").unwrap();
        std::fs::write(dir.join("ARCHITECTURE.md"), "[x](crates/x.rs)").unwrap();
        std::fs::write(dir.join("docs/src/guide/a.md"), "").unwrap();
        std::fs::write(dir.join("docs/src/guide/b.md"), "").unwrap();
        let problems = check_links(&dir, &out).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let broken: Vec<&str> = problems.iter().map(|p| p.split(": ").nth(1).unwrap()).collect();
        assert_eq!(
            broken,
            ["b.html#gone", "c.html", "#nope", "../../../crates/y.rs", "docs/src/guide/b.md#nowhere"],
            "{problems:#?}"
        );
    }
}
