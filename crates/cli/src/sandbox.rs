//! What seri keeps from the commands and servers it starts: the `sandbox`
//! object of `config.json` (with `--sandbox MODE` over its mode), and the
//! secrets seri read (every provider's key variable, a configured
//! `apiKeyEnv`, an `apiKey` written in the file, the server token, the
//! store's URL, and every variable whose name or value reads as a secret),
//! which `bash` runs without and every tool result has redacted.
//!
//! ```json
//! "sandbox": {"mode": "workspace-write", "network": false, "writable": ["~/.cache"],
//!             "denyRead": ["~/.kube"], "allowRead": [], "passEnv": [], "whenUnavailable": "refuse"}
//! ```
//!
//! What no command reads ([`DENY_READ_IN_HOME`], whether or not it exists
//! yet, plus `denyRead`): the in-process tools (`read_file`, `grep`,
//! `list`, `write_file`, `edit`) refuse the same places. seri's profile and
//! its store's file are always among them: `allowRead` cannot take them
//! out.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use seri_providers::ProviderKind;
use seri_tools::{Launcher, Sandbox, SandboxMode, SandboxPolicy, Secret, Secrets, WhenUnavailable};

use crate::config::ConfigFile;

/// The hidden subcommand that runs the launcher: `seri __launch … -- CMD`.
pub(crate) const LAUNCH_SUBCOMMAND: &str = "__launch";

/// The places no sandboxed command and no tool reads, below the home
/// folder, whether or not they exist yet: keys and credentials an agent
/// never needs. `allowRead` takes one out; `denyRead` adds more; seri's
/// own profile is hidden besides, always.
pub(crate) const DENY_READ_IN_HOME: [&str; 19] = [
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".config/gcloud",
    ".netrc",
    ".docker",
    ".kube",
    ".git-credentials",
    ".config/gh",
    ".npmrc",
    ".pypirc",
    ".password-store",
    // Other agents' keys and tokens.
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".local/share/opencode/auth.json",
    ".pi/agent/auth.json",
    ".gemini/oauth_creds.json",
    ".config/github-copilot",
];

/// `sandbox` in `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SandboxConfig {
    /// `read-only`, `workspace-write` (the default) or `full-access`.
    pub(crate) mode: Option<String>,
    /// Whether commands may open TCP connections (default: no).
    pub(crate) network: Option<bool>,
    /// Folders commands may write besides the workspace and the temporary
    /// folder (`~/` is the home folder). `writablePaths` is its older name.
    #[serde(default, alias = "writablePaths")]
    pub(crate) writable: Vec<String>,
    /// Places neither commands nor tools may read, besides the defaults
    /// (`~/.ssh`, `~/.aws`, … and seri's profile). `hiddenPaths` is its
    /// older name.
    #[serde(default, alias = "hiddenPaths")]
    pub(crate) deny_read: Vec<String>,
    /// Defaults to take out of the places no command reads (`~/.docker`,
    /// say); seri's profile and store cannot be taken out.
    #[serde(default)]
    pub(crate) allow_read: Vec<String>,
    /// Secret variables `bash` may see anyway: `["OPENAI_API_KEY"]`.
    #[serde(default)]
    pub(crate) pass_env: Vec<String>,
    /// On a kernel that cannot enforce the sandbox: `refuse` (the default)
    /// or `unsandboxed` (run, with a warning).
    pub(crate) when_unavailable: Option<String>,
}

/// The runtime's sandbox: `flag` (`--sandbox`) over `config.json`'s mode,
/// the rest from `config.json`, run through seri itself as the launcher.
/// `own` are seri's own places ([`own_places`]) that no command or tool
/// reads or writes whatever the configuration says. Every mistake names
/// its key.
pub(crate) fn sandbox(
    config: &SandboxConfig,
    flag: Option<&str>,
    home: Option<&Path>,
    own: &OwnPlaces,
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
    let writable = config.writable.iter().enumerate().map(|(n, p)| path("writable", n, p)).collect::<Result<_, _>>()?;
    let allowed: Vec<PathBuf> =
        config.allow_read.iter().enumerate().map(|(n, p)| path("allowRead", n, p)).collect::<Result<_, _>>()?;
    let mut hidden: Vec<PathBuf> = home
        .map(|h| DENY_READ_IN_HOME.iter().map(|p| h.join(p)).filter(|p| !allowed.contains(p)).collect())
        .unwrap_or_default();
    hidden.extend(own.hidden.iter().cloned());
    for (n, p) in config.deny_read.iter().enumerate() {
        hidden.push(path("denyRead", n, p)?);
    }
    let policy = SandboxPolicy {
        mode,
        network: config.network.unwrap_or(false),
        writable,
        hidden,
        read_only: own.read_only.clone(),
        when_unavailable,
    };
    // Without its own path seri has no launcher: a sandboxed call is then
    // refused (or warned about) saying so, never run bare.
    let launcher =
        std::env::current_exe().ok().map(|program| Launcher { program, args: vec![OsString::from(LAUNCH_SUBCOMMAND)] });
    Ok(Sandbox::new(policy, launcher))
}

/// seri's own places, kept from every command and tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OwnPlaces {
    /// Never read nor written: everything in the profile but `hooks/`, and
    /// the store's file where `store.url` puts it.
    pub(crate) hidden: Vec<PathBuf>,
    /// Read (a hook's script is run from there), never written: the
    /// profile's `hooks/`.
    pub(crate) read_only: Vec<PathBuf>,
}

/// What the profile holds that a person's hooks may read.
const PROFILE_READABLE: &str = "hooks";

/// Names in the profile that are hidden even before they exist (anything
/// made there later is out of reach anyway: the profile is never granted
/// whole once it holds a hidden place).
const PROFILE_NAMES: [&str; 10] = [
    "config.json",
    "seri.db",
    "seri.db-wal",
    "seri.db-shm",
    "seri.db-journal",
    "memory",
    "rules",
    "sessions",
    "attachments",
    "server.json",
];

/// seri's own places for a profile at `profile` and an SQLite store at
/// `store_file` (when `store.url` names one elsewhere): every entry of the
/// profile but `hooks/` (and its usual names, made or not) hidden, `hooks/`
/// read-only, the store's file and its journals hidden.
pub(crate) fn own_places(profile: &Path, store_file: Option<&Path>) -> OwnPlaces {
    let mut hidden: Vec<PathBuf> = PROFILE_NAMES.iter().map(|n| profile.join(n)).collect();
    for entry in std::fs::read_dir(profile).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_name() != PROFILE_READABLE && !hidden.contains(&path) {
            hidden.push(path);
        }
    }
    if let Some(file) = store_file {
        hidden.extend(["", "-wal", "-shm", "-journal"].map(|end| PathBuf::from(format!("{}{end}", file.display()))));
    }
    OwnPlaces { hidden, read_only: vec![profile.join(PROFILE_READABLE)] }
}

/// What a person is told at start when the sandbox in force cannot be
/// enforced here (`enforceable`: the kernel's answer, [`seri_tools::sandbox::probe`]):
/// that commands will be refused, or run unsandboxed as configured. `None`
/// when it is enforced, or when there is none (`full-access`).
pub(crate) fn unenforced_notice(policy: &SandboxPolicy, enforceable: Result<(), String>) -> Option<String> {
    if policy.mode == SandboxMode::FullAccess {
        return None;
    }
    let why = enforceable.err()?;
    Some(match policy.when_unavailable {
        WhenUnavailable::Refuse => format!(
            "seri: the sandbox ({}) cannot be enforced here: {why}; commands, hooks and MCP servers will be refused, not run bare (--sandbox full-access, or sandbox.whenUnavailable \"unsandboxed\", to run them anyway)",
            policy.mode
        ),
        WhenUnavailable::Unsandboxed => format!(
            "seri: the sandbox ({}) cannot be enforced here: {why}; as configured (sandbox.whenUnavailable \"unsandboxed\"), commands run WITHOUT it",
            policy.mode
        ),
    })
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
/// and each value seri read, named by where it came from. `vars` is the
/// whole environment: a variable whose name reads as a secret's
/// ([`secret_name`]) or whose value is a URL with a password is one too.
pub(crate) fn secrets(
    config: &ConfigFile,
    env: &dyn Fn(&str) -> Option<String>,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Secrets {
    let mut variables: Vec<String> =
        ProviderKind::ALL.iter().filter_map(|k| k.key_variable()).map(str::to_owned).collect();
    variables.extend(config.providers.values().filter_map(|p| p.api_key_env.clone()));
    variables.push(crate::config::SERVER_TOKEN_ENV.to_owned());
    // The store is seri's alone: its URL may carry a password, and names
    // a database no command has any business with.
    variables.push(STORE_URL_ENV.to_owned());
    for (name, value) in vars {
        if !variables.contains(&name) && (secret_name(&name) || url_password(&value).is_some()) {
            variables.push(name);
        }
    }
    let mut values: Vec<Secret> =
        variables.iter().filter_map(|name| env(name).map(|value| Secret { name: name.clone(), value })).collect();
    let passwords: Vec<Secret> = values
        .iter()
        .filter_map(|s| url_password(&s.value).map(|p| Secret { name: format!("{} (password)", s.name), value: p }))
        .collect();
    values.extend(passwords);
    for (provider, settings) in &config.providers {
        if let Some(value) = settings.api_key.clone() {
            values.push(Secret { name: format!("providers.{provider}.apiKey"), value });
        }
    }
    Secrets::new(values, variables, config.sandbox.pass_env.clone())
}

/// The variable that names the store (`SERI_STORE_URL`).
const STORE_URL_ENV: &str = "SERI_STORE_URL";

/// Whether a variable's name reads as a secret's: a word of it (split at
/// `_`) is `KEY` at the end, or it holds `TOKEN`, `SECRET`, `PASSWORD`,
/// `PASSWD`, `CREDENTIAL` or `APIKEY`. `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
/// `PGPASSWORD` and `STRIPE_KEY` are; `KEYBOARD` and `SSH_AUTH_SOCK` are not.
pub(crate) fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY"].iter().any(|w| upper.contains(w))
        || upper.rsplit('_').next().is_some_and(|last| last == "KEY")
}

/// The password of a URL that carries one (`postgres://u:PASS@host/db`).
fn url_password(value: &str) -> Option<String> {
    let (scheme, rest) = value.split_once("://")?;
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then(|| password.to_owned())
}

/// What `/sandbox WORDS` asks: nothing (show it), a mode, or the network
/// on or off, as the change to record (`sandbox_changed`); or the line to
/// show in red.
pub(crate) fn slash_change(words: &str) -> Result<Option<seri_core::SandboxChanged>, String> {
    let words: Vec<&str> = words.split_whitespace().collect();
    Ok(match words.as_slice() {
        [] => None,
        ["network", "on"] => Some(seri_core::SandboxChanged { mode: None, network: Some(true) }),
        ["network", "off"] => Some(seri_core::SandboxChanged { mode: None, network: Some(false) }),
        [mode] => {
            let mode = mode.parse::<SandboxMode>().map_err(|e| format!("/sandbox: {e}"))?;
            Some(seri_core::SandboxChanged { mode: Some(mode), network: None })
        }
        _ => return Err("usage: /sandbox [read-only|workspace-write|full-access], /sandbox network on|off".to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_file_and_every_mistake_names_its_key() {
        let config = |value: serde_json::Value| serde_json::from_value::<SandboxConfig>(value).unwrap();
        let home = Path::new("/home/me");
        let profile = OwnPlaces { hidden: vec![PathBuf::from("/home/me/.seri")], read_only: Vec::new() };
        let file = config(serde_json::json!({
            "mode": "read-only", "writablePaths": ["~/.cache"], "hiddenPaths": ["/srv/keys"],
            "allowRead": ["~/.docker"]
        }));
        let built = sandbox(&file, None, Some(home), &profile).unwrap();
        let policy = built.policy();
        assert_eq!(policy.mode, SandboxMode::ReadOnly);
        assert!(!policy.network);
        assert_eq!(policy.writable, [PathBuf::from("/home/me/.cache")]);
        let hidden: Vec<&str> = policy.hidden.iter().filter_map(|p| p.to_str()).collect();
        assert_eq!(&hidden[..3], ["/home/me/.ssh", "/home/me/.aws", "/home/me/.gnupg"]);
        assert_eq!(&hidden[hidden.len() - 2..], ["/home/me/.seri", "/srv/keys"], "the profile, always; then denyRead");
        assert!(!hidden.contains(&"/home/me/.docker"), "allowRead takes a default out: {hidden:?}");
        assert!(hidden.contains(&"/home/me/.codex/auth.json"), "other agents' keys: {hidden:?}");
        let contract = config(serde_json::json!({"writable": ["/w"], "denyRead": ["/d"]}));
        let built = sandbox(&contract, None, Some(home), &profile).unwrap();
        assert_eq!(built.policy().writable, [PathBuf::from("/w")]);
        assert_eq!(built.policy().hidden.last(), Some(&PathBuf::from("/d")));
        assert_eq!(
            sandbox(&file, Some("full-access"), Some(home), &profile).unwrap().policy().mode,
            SandboxMode::FullAccess
        );
        assert_eq!(
            sandbox(&SandboxConfig::default(), None, None, &profile).unwrap().policy().mode,
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
            (serde_json::json!({"writablePaths": ["rel"]}), None, "sandbox.writable[0]: `rel` is not an absolute path"),
        ] {
            let error = sandbox(&config(file), flag, Some(home), &profile).unwrap_err();
            assert!(error.starts_with(expected), "{error}");
        }
        assert!(
            serde_json::from_value::<SandboxConfig>(serde_json::json!({"net": true})).is_err(),
            "unknown keys are refused"
        );
    }

    #[test]
    fn a_sandbox_this_kernel_cannot_enforce_is_said_at_start() {
        let policy = |mode, when_unavailable| SandboxPolicy { mode, when_unavailable, ..SandboxPolicy::default() };
        let no = || Err("this kernel has no Landlock".to_owned());
        let refused = unenforced_notice(&policy(SandboxMode::WorkspaceWrite, WhenUnavailable::Refuse), no()).unwrap();
        assert!(refused.contains("workspace-write") && refused.contains("no Landlock") && refused.contains("refused"));
        let bare = unenforced_notice(&policy(SandboxMode::ReadOnly, WhenUnavailable::Unsandboxed), no()).unwrap();
        assert!(bare.contains("WITHOUT it"), "{bare}");
        assert_eq!(unenforced_notice(&policy(SandboxMode::FullAccess, WhenUnavailable::Refuse), no()), None);
        assert_eq!(unenforced_notice(&policy(SandboxMode::WorkspaceWrite, WhenUnavailable::Refuse), Ok(())), None);
    }

    #[test]
    fn the_whole_profile_is_hidden_but_its_hooks_which_are_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path();
        for folder in ["hooks", "trajectories-export"] {
            std::fs::create_dir_all(profile.join(folder)).unwrap();
        }
        std::fs::write(profile.join("token-hashes"), "").unwrap();
        let own = own_places(profile, Some(Path::new("/srv/seri.db")));
        for hidden in ["config.json", "seri.db-wal", "memory", "rules", "trajectories-export", "token-hashes"] {
            assert!(own.hidden.contains(&profile.join(hidden)), "{hidden}: {:?}", own.hidden);
        }
        assert!(!own.hidden.contains(&profile.join("hooks")));
        assert_eq!(own.read_only, [profile.join("hooks")]);
        assert!(own.hidden.contains(&PathBuf::from("/srv/seri.db-wal")), "the store's file elsewhere");
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
        let vars = [
            ("GITHUB_TOKEN", "ghp_0123456789abcdef"),
            ("DATABASE_URL", "postgres://app:hunter2-long-pass@db/app"),
            ("KEYBOARD", "us"),
            ("SSH_AUTH_SOCK", "/run/agent.sock"),
            ("PATH", "/usr/bin"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let lookup = |name: &str| env(name).or_else(|| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()));
        let secrets = secrets(&config, &lookup, vars.clone());
        let removed: Vec<&str> = secrets.removed_from_env().collect();
        assert_eq!(
            removed,
            [
                "DATABASE_URL",
                "GITHUB_TOKEN",
                "MY_LLM_KEY",
                "OPENAI_API_KEY",
                "OPENROUTER_API_KEY",
                "SERI_SERVER_TOKEN",
                "SERI_STORE_URL"
            ]
        );
        assert_eq!(
            secrets.redact("sk-openai-123456 local-key-123456 or-key-in-the-file ghp_0123456789abcdef"),
            "[redacted: OPENAI_API_KEY] [redacted: MY_LLM_KEY] [redacted: providers.openrouter.apiKey] [redacted: GITHUB_TOKEN]"
        );
        assert_eq!(secrets.redact("pw=hunter2-long-pass"), "pw=[redacted: DATABASE_URL (password)]");
        assert_eq!(url_password("postgres://u@h/db"), None);
        assert_eq!(url_password("https://example.com/a:b@c"), None, "an @ in the path is no userinfo");
    }

    #[test]
    fn slash_sandbox_words_are_the_change_to_record() {
        use seri_core::SandboxChanged;
        assert_eq!(slash_change("  "), Ok(None));
        let read_only = SandboxChanged { mode: Some(SandboxMode::ReadOnly), network: None };
        assert_eq!(slash_change("read-only"), Ok(Some(read_only)));
        assert_eq!(slash_change("network off"), Ok(Some(SandboxChanged { mode: None, network: Some(false) })));
        assert_eq!(
            slash_change("read-write"),
            Err("/sandbox: `read-write` is not one of: read-only, workspace-write, full-access".to_owned())
        );
        assert!(slash_change("network maybe").unwrap_err().starts_with("usage: /sandbox"));
    }
}
