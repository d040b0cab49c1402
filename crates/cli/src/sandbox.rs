//! What seri keeps from the commands and servers it starts: the `sandbox`
//! object of `config.json` (with `--sandbox MODE` over its mode), and the
//! secrets seri read (every provider's key variable, a configured
//! `apiKeyEnv`, an `apiKey` written in the file, the server token), which
//! `bash` runs without and every tool result has redacted.
//!
//! ```json
//! "sandbox": {"mode": "workspace-write", "network": false, "writablePaths": ["~/.cache"],
//!             "hiddenPaths": ["~/.kube"], "passEnv": [], "whenUnavailable": "refuse"}
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use seri_providers::ProviderKind;
use seri_tools::{Launcher, Sandbox, SandboxMode, SandboxPolicy, Secret, Secrets, WhenUnavailable};

use crate::config::ConfigFile;

/// The hidden subcommand that runs the launcher: `seri __launch … -- CMD`.
pub(crate) const LAUNCH_SUBCOMMAND: &str = "__launch";

/// The places no sandboxed command reads, below the home folder, besides
/// the profile's `config.json` (which may hold keys) and `hiddenPaths`.
pub(crate) const HIDDEN_IN_HOME: [&str; 3] = [".ssh", ".aws", ".gnupg"];

/// `sandbox` in `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SandboxConfig {
    /// `read-only`, `workspace-write` (the default) or `full-access`.
    pub(crate) mode: Option<String>,
    /// Whether commands may open TCP connections (default: no).
    pub(crate) network: Option<bool>,
    /// Folders commands may write besides the workspace and the temporary
    /// folder (`~/` is the home folder).
    #[serde(default)]
    pub(crate) writable_paths: Vec<String>,
    /// Places commands may not read, besides ~/.ssh, ~/.aws, ~/.gnupg and
    /// the profile's config.json.
    #[serde(default)]
    pub(crate) hidden_paths: Vec<String>,
    /// Secret variables `bash` may see anyway: `["OPENAI_API_KEY"]`.
    #[serde(default)]
    pub(crate) pass_env: Vec<String>,
    /// On a kernel that cannot enforce the sandbox: `refuse` (the default)
    /// or `unsandboxed` (run, with a warning).
    pub(crate) when_unavailable: Option<String>,
}

/// The runtime's sandbox: `flag` (`--sandbox`) over `config.json`'s mode,
/// the rest from `config.json`, run through seri itself as the launcher.
/// Every mistake names its key.
pub(crate) fn sandbox(
    config: &SandboxConfig,
    flag: Option<&str>,
    home: Option<&Path>,
    profile_config: &Path,
) -> Result<Sandbox, String> {
    let mode = match (flag, &config.mode) {
        (Some(flag), _) => flag.parse::<SandboxMode>().map_err(|e| format!("--sandbox: {e}"))?,
        (None, Some(mode)) => mode.parse::<SandboxMode>().map_err(|e| format!("sandbox.mode: {e}"))?,
        (None, None) => SandboxMode::default(),
    };
    let when_unavailable = match &config.when_unavailable {
        Some(choice) => choice.parse::<WhenUnavailable>().map_err(|e| format!("sandbox.whenUnavailable: {e}"))?,
        None => WhenUnavailable::default(),
    };
    let path = |key: &str, n: usize, written: &str| -> Result<PathBuf, String> {
        let path = match (written.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            (Some(_), None) => {
                return Err(format!("sandbox.{key}[{n}]: `{written}` names the home folder, but HOME is not set"));
            }
            (None, _) => PathBuf::from(written),
        };
        if !path.is_absolute() {
            return Err(format!("sandbox.{key}[{n}]: `{written}` is not an absolute path (or one starting with ~/)"));
        }
        Ok(path)
    };
    let writable =
        config.writable_paths.iter().enumerate().map(|(n, p)| path("writablePaths", n, p)).collect::<Result<_, _>>()?;
    let mut hidden: Vec<PathBuf> = home.map(|h| HIDDEN_IN_HOME.iter().map(|p| h.join(p)).collect()).unwrap_or_default();
    hidden.push(profile_config.to_path_buf());
    for (n, p) in config.hidden_paths.iter().enumerate() {
        hidden.push(path("hiddenPaths", n, p)?);
    }
    let policy = SandboxPolicy { mode, network: config.network.unwrap_or(false), writable, hidden, when_unavailable };
    // Without its own path seri has no launcher: a sandboxed call is then
    // refused (or warned about) saying so, never run bare.
    let launcher =
        std::env::current_exe().ok().map(|program| Launcher { program, args: vec![OsString::from(LAUNCH_SUBCOMMAND)] });
    Ok(Sandbox::new(policy, launcher))
}

/// `seri config`'s rows for the sandbox: the mode and the network with
/// where each came from, and whether this kernel enforces them.
pub(crate) fn config_rows(
    config: &SandboxConfig,
    flag: Option<&str>,
    sandbox: &Sandbox,
) -> Vec<(String, String, String)> {
    let policy = sandbox.policy();
    let mode_origin = match (flag, &config.mode) {
        (Some(_), _) => "--sandbox",
        (None, Some(_)) => "config.json sandbox.mode",
        (None, None) => "default",
    };
    let network_origin = if config.network.is_some() { "config.json sandbox.network" } else { "default" };
    let enforced = if policy.mode == SandboxMode::FullAccess {
        "no sandbox (full-access)".to_owned()
    } else {
        match (sandbox.launcher(), seri_tools::sandbox::probe(policy.network)) {
            (None, _) => format!("no: seri cannot find its own program ({})", policy.when_unavailable.as_str()),
            (Some(_), Ok(())) => "yes (Landlock)".to_owned(),
            (Some(_), Err(e)) => format!("no: {e} ({})", policy.when_unavailable.as_str()),
        }
    };
    vec![
        ("sandbox.mode".to_owned(), policy.mode.to_string(), mode_origin.to_owned()),
        ("sandbox.network".to_owned(), if policy.network { "on" } else { "off" }.to_owned(), network_origin.to_owned()),
        ("sandbox.enforced".to_owned(), enforced, "this kernel".to_owned()),
    ]
}

/// The secrets of this process: each variable that holds one (set or not)
/// and each value seri read, named by where it came from.
pub(crate) fn secrets(config: &ConfigFile, env: &dyn Fn(&str) -> Option<String>) -> Secrets {
    let mut variables: Vec<String> =
        ProviderKind::ALL.iter().filter_map(|k| k.key_variable()).map(str::to_owned).collect();
    variables.extend(config.providers.values().filter_map(|p| p.api_key_env.clone()));
    variables.push(crate::serve::SERVER_TOKEN_ENV.to_owned());
    let mut values: Vec<Secret> =
        variables.iter().filter_map(|name| env(name).map(|value| Secret { name: name.clone(), value })).collect();
    for (provider, settings) in &config.providers {
        if let Some(value) = settings.api_key.clone() {
            values.push(Secret { name: format!("providers.{provider}.apiKey"), value });
        }
    }
    Secrets::new(values, variables, config.sandbox.pass_env.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_file_and_every_mistake_names_its_key() {
        let config = |value: serde_json::Value| serde_json::from_value::<SandboxConfig>(value).unwrap();
        let home = Path::new("/home/me");
        let profile = Path::new("/home/me/.seri/config.json");
        let file = config(
            serde_json::json!({"mode": "read-only", "writablePaths": ["~/.cache"], "hiddenPaths": ["/srv/keys"]}),
        );
        let built = sandbox(&file, None, Some(home), profile).unwrap();
        let policy = built.policy();
        assert_eq!(policy.mode, SandboxMode::ReadOnly);
        assert!(!policy.network);
        assert_eq!(policy.writable, [PathBuf::from("/home/me/.cache")]);
        let hidden: Vec<&str> = policy.hidden.iter().filter_map(|p| p.to_str()).collect();
        assert_eq!(
            hidden,
            ["/home/me/.ssh", "/home/me/.aws", "/home/me/.gnupg", "/home/me/.seri/config.json", "/srv/keys"]
        );
        assert_eq!(
            sandbox(&file, Some("full-access"), Some(home), profile).unwrap().policy().mode,
            SandboxMode::FullAccess
        );
        assert_eq!(
            sandbox(&SandboxConfig::default(), None, None, profile).unwrap().policy().mode,
            SandboxMode::WorkspaceWrite
        );
        for (file, flag, expected) in [
            (
                serde_json::json!({}),
                Some("open"),
                "--sandbox: `open` is not one of: read-only, workspace-write, full-access",
            ),
            (serde_json::json!({"mode": "rw"}), None, "sandbox.mode: `rw` is not one of"),
            (
                serde_json::json!({"whenUnavailable": "warn"}),
                None,
                "sandbox.whenUnavailable: `warn` is not one of: refuse, unsandboxed",
            ),
            (
                serde_json::json!({"writablePaths": ["rel"]}),
                None,
                "sandbox.writablePaths[0]: `rel` is not an absolute path",
            ),
        ] {
            let error = sandbox(&config(file), flag, Some(home), profile).unwrap_err();
            assert!(error.starts_with(expected), "{error}");
        }
        assert!(
            serde_json::from_value::<SandboxConfig>(serde_json::json!({"net": true})).is_err(),
            "unknown keys are refused"
        );
    }

    #[test]
    fn every_provider_key_and_the_configured_ones_are_secrets() {
        let config: ConfigFile = serde_json::from_value(serde_json::json!({
            "providers": {"openai-compatible": {"apiKeyEnv": "MY_LLM_KEY"}, "openrouter": {"apiKey": "or-key-in-the-file"}},
            "sandbox": {"passEnv": ["ANTHROPIC_API_KEY"]}
        }))
        .unwrap();
        let env = |name: &str| match name {
            "OPENAI_API_KEY" => Some("sk-openai-123456".to_owned()),
            "MY_LLM_KEY" => Some("local-key-123456".to_owned()),
            _ => None,
        };
        let secrets = secrets(&config, &env);
        let removed: Vec<&str> = secrets.removed_from_env().collect();
        assert_eq!(removed, ["MY_LLM_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "SERI_SERVER_TOKEN"]);
        assert_eq!(
            secrets.redact("sk-openai-123456 local-key-123456 or-key-in-the-file"),
            "[redacted: OPENAI_API_KEY] [redacted: MY_LLM_KEY] [redacted: providers.openrouter.apiKey]"
        );
    }
}
