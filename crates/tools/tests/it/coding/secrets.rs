//! Secrets stay out: `bash` runs without the provider keys seri read, and a
//! key that shows up anyway (read from a file) is redacted from the result,
//! error or not, before anyone stores or reads it.

use std::sync::Arc;

use serde_json::json;
use seri_tools::{Bash, BashSettings, Secret, Secrets, ToolRegistry};

use super::world::{World, shown, trusted};

const KEY: &str = "sk-test-0123456789abcdef";

/// A registry whose `bash` keeps `variables` out of its environment and
/// whose results have `KEY` redacted as `OPENAI_API_KEY`.
fn registry(variables: &[&str], passed: &[&str]) -> ToolRegistry {
    let secrets = Secrets::new(
        [Secret { name: "OPENAI_API_KEY".into(), value: KEY.into() }],
        variables.iter().map(|v| (*v).to_owned()),
        passed.iter().map(|v| (*v).to_owned()),
    );
    let mut registry = ToolRegistry::with_coding_tools();
    registry.replace(Arc::new(Bash::new(BashSettings { secrets: secrets.clone(), ..BashSettings::default() })));
    registry.set_secrets(secrets);
    registry
}

async fn bash(world: &World, registry: &ToolRegistry, command: &str) -> String {
    shown(world.call_through(registry, &world.workspace, &trusted(), "bash", json!({ "command": command })).await)
}

#[tokio::test]
async fn bash_runs_without_the_secret_variables_unless_configuration_passes_them() {
    let world = World::new();
    // The test process has CARGO_PKG_NAME (cargo sets it): it stands for a
    // key variable seri read, since a test may not set one.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let kept_out = bash(&world, &registry(&["CARGO_PKG_NAME"], &[]), "env").await;
    assert!(kept_out.starts_with("ok: exit code: 0") && kept_out.contains("\nPATH="), "{kept_out}");
    assert!(!kept_out.contains("CARGO_PKG_NAME="), "{kept_out}");
    let passed = bash(&world, &registry(&["CARGO_PKG_NAME"], &["CARGO_PKG_NAME"]), "env").await;
    assert!(passed.contains("CARGO_PKG_NAME=seri-tools"), "{passed}");
}

#[tokio::test]
async fn a_key_read_from_a_file_is_redacted_in_results_and_errors() {
    let world = World::new();
    world.write(".env", format!("OPENAI_API_KEY={KEY}\n"));
    let registry = registry(&[], &[]);
    let printed = bash(&world, &registry, "cat .env; echo \"$(cat .env)\" >&2").await;
    assert_eq!(
        printed,
        "ok: exit code: 0\nstdout:\nOPENAI_API_KEY=[redacted: OPENAI_API_KEY]\nstderr:\nOPENAI_API_KEY=[redacted: OPENAI_API_KEY]"
    );
    let read =
        shown(world.call_through(&registry, &world.workspace, &trusted(), "read_file", json!({"path": ".env"})).await);
    assert!(read.contains("[redacted: OPENAI_API_KEY]") && !read.contains(KEY), "{read}");
    let timed_out = world
        .call_through(
            &registry,
            &world.workspace,
            &trusted(),
            "bash",
            json!({"command": "cat .env; sleep 30", "timeoutMs": 300}),
        )
        .await;
    let timed_out = shown(timed_out);
    assert!(timed_out.starts_with("error: the command did not finish"), "{timed_out}");
    assert!(timed_out.contains("[redacted: OPENAI_API_KEY]") && !timed_out.contains(KEY), "{timed_out}");
}
