//! The committed schemas in `crates/tools/schemas/` are what the code
//! generates. `SERI_UPDATE_SCHEMAS=1 cargo test -p seri-tools schemas`
//! rewrites them.

use std::path::PathBuf;

use seri_tools::schemas::session_verb_schema_files;

#[test]
fn schemas_are_fresh() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let update = std::env::var_os("SERI_UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, contents) in session_verb_schema_files() {
        let path = dir.join(&name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &contents).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(contents.as_str()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale tool schemas {stale:?}: run `SERI_UPDATE_SCHEMAS=1 cargo test -p seri-tools schemas` and commit crates/tools/schemas/"
    );
}
