//! What `cargo metadata` says about the workspace: its packages, their
//! example targets, and the resolved dependency graph.
//!
//! Cargo's own answer, parsed with serde_json, rather than a walk over
//! `Cargo.toml` files: it knows `[[example]]` entries with custom paths, and
//! the dependency graph after features and platforms are resolved.

#[cfg(test)]
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// `cargo metadata --format-version 1` with `extra` arguments, parsed.
pub(crate) fn cargo_metadata(root: &Path, extra: &[&str]) -> Result<Value, String> {
    let output = Command::new(super::cargo())
        .args(["metadata", "--format-version", "1"])
        .args(extra)
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo metadata failed ({})", output.status));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata printed something other than JSON: {e}"))
}

/// One example target of a workspace package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Example {
    /// The package that owns it (`seri-store`).
    pub(crate) package: String,
    /// The example's name (`store_tour`), as `cargo run --example` takes it.
    pub(crate) name: String,
}

fn strs<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    value[key].as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// The workspace's packages in `metadata` (from `--no-deps` or not), by name.
fn workspace_packages(metadata: &Value) -> Vec<&Value> {
    let members: Vec<&str> = strs(metadata, "workspace_members").collect();
    let packages = metadata["packages"].as_array().into_iter().flatten();
    packages.filter(|p| p["id"].as_str().is_some_and(|id| members.contains(&id))).collect()
}

/// Every example target of every workspace package, sorted by package and name.
pub(crate) fn workspace_examples(metadata: &Value) -> Vec<Example> {
    let mut examples = Vec::new();
    for package in workspace_packages(metadata) {
        let name = package["name"].as_str().unwrap_or_default();
        for target in package["targets"].as_array().into_iter().flatten() {
            if strs(target, "kind").any(|k| k == "example") {
                let example = target["name"].as_str().unwrap_or_default();
                examples.push(Example { package: name.to_owned(), name: example.to_owned() });
            }
        }
    }
    examples.sort();
    examples
}

/// The workspace packages that have a library target, sorted.
pub(crate) fn library_packages(metadata: &Value) -> Vec<String> {
    let mut libraries: Vec<String> = workspace_packages(metadata)
        .into_iter()
        .filter(|p| p["targets"].as_array().into_iter().flatten().any(|t| strs(t, "kind").any(|k| k == "lib")))
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    libraries.sort();
    libraries
}

/// Every package `package` depends on through normal dependencies only
/// (not dev-, not build-dependencies), directly or transitively, in the
/// resolve graph of a full `cargo metadata`. Each is given with the chain
/// that reaches it: `["seri-core", "serde_json", "memchr"]`.
#[cfg(test)]
pub(crate) fn normal_dependencies(metadata: &Value, package: &str) -> Result<BTreeMap<String, Vec<String>>, String> {
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .ok_or("cargo metadata has no resolve graph (was it run with --no-deps?)")?
        .iter()
        .filter_map(|node| Some((node["id"].as_str()?, node)))
        .collect();
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let start = workspace_packages(metadata)
        .into_iter()
        .find(|p| p["name"] == package)
        .and_then(|p| p["id"].as_str())
        .ok_or_else(|| format!("`{package}` is not a workspace package"))?;
    // Visited by package id, so that two versions of one crate are both walked.
    let mut visited = BTreeSet::from([start]);
    let mut chains: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut queue = VecDeque::from([(start, vec![package.to_owned()])]);
    while let Some((id, chain)) = queue.pop_front() {
        let Some(node) = nodes.get(id) else { continue };
        for dep in node["deps"].as_array().into_iter().flatten() {
            // `kind` is null for a normal dependency, "dev" or "build" otherwise.
            let mut kinds = dep["dep_kinds"].as_array().into_iter().flatten();
            if !kinds.any(|k| k["kind"].is_null()) {
                continue;
            }
            let Some(dep_id) = dep["pkg"].as_str() else { continue };
            if !visited.insert(dep_id) {
                continue;
            }
            let name = names.get(dep_id).copied().unwrap_or(dep_id).to_owned();
            let mut longer = chain.clone();
            longer.push(name.clone());
            chains.entry(name).or_insert_with(|| longer.clone());
            queue.push_back((dep_id, longer));
        }
    }
    Ok(chains)
}
