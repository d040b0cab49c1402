//! The committed schemas in `crates/tools/schemas/` are what the code
//! generates, one per tool (session verbs and coding tools), and nothing
//! else is there. `SERI_UPDATE_SCHEMAS=1 cargo test -p seri-tools schemas`
//! rewrites them.

use std::path::PathBuf;

use seri_tools::schemas::{session_verb_schema_files, tool_schema_files};

#[test]
fn schemas_are_fresh() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let update = std::env::var_os("SERI_UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let files = tool_schema_files();
    for (name, contents) in &files {
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, contents).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(contents.as_str()) {
            stale.push(name.clone());
        }
    }
    // A file for a tool that no longer exists is stale too.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if files.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if update {
            std::fs::remove_file(dir.join(&name)).unwrap();
        } else {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale tool schemas {stale:?}: run `SERI_UPDATE_SCHEMAS=1 cargo test -p seri-tools schemas` and commit crates/tools/schemas/"
    );
}

#[test]
fn the_session_verbs_are_the_first_files() {
    let verbs = session_verb_schema_files();
    let all = tool_schema_files();
    assert_eq!(all[..verbs.len()], verbs[..]);
    let names: Vec<&str> = all[verbs.len()..].iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["read_file.json", "write_file.json", "edit.json", "list.json", "grep.json", "bash.json", "remember.json"]
    );
}
