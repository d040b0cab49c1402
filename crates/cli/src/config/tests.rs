//! Tests of `config`, beside it so the module itself stays short.

use super::*;

fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
}

fn file(text: &str) -> ConfigFile {
    ConfigFile::parse(Path::new("config.json"), text).unwrap()
}

#[test]
fn flags_beat_environment_beat_file_beat_defaults() {
    let cfg = file(r#"{"model": "from-file", "maxTurns": 7, "context": {"strategy": "compact", "window": 9000}}"#);
    let vars = [("SERI_MODEL", "from-env"), ("SERI_MAX_TURNS", "8")];
    let flags = FlagSettings { max_turns: Some(9), ..FlagSettings::default() };
    let e = resolve(&flags, &env(&vars), &cfg).unwrap();
    assert_eq!(e.max_turns, Sourced { value: 9, origin: Origin::Flag("--max-turns") });
    assert_eq!(e.model, Sourced { value: Some("from-env".into()), origin: Origin::Env("SERI_MODEL") });
    assert_eq!(e.context_strategy.value, ContextStrategy::Compact);
    assert_eq!(e.context_window, Sourced { value: Some(9000), origin: Origin::File("context.window") });
    assert_eq!(e.keep_tokens, Sourced { value: DEFAULT_KEEP_TOKENS, origin: Origin::Default });
    assert_eq!(
        e.overridden,
        vec![
            "SERI_MODEL=from-env overrides config.json model=from-file",
            "SERI_MAX_TURNS=8 overrides config.json maxTurns=7"
        ]
    );
}

#[test]
fn the_provider_defaults_to_the_first_key_found() {
    let e = resolve(&FlagSettings::default(), &env(&[("OPENAI_API_KEY", "k")]), &ConfigFile::default()).unwrap();
    assert_eq!(e.provider, Sourced { value: "openai".into(), origin: Origin::KeyFound("OPENAI_API_KEY") });
    let none = resolve(&FlagSettings::default(), &env(&[]), &ConfigFile::default()).unwrap();
    assert_eq!(none.provider, Sourced { value: "anthropic".into(), origin: Origin::Default });
}

#[test]
fn seri_config_names_the_model_and_provider_in_force_and_where_each_came_from() {
    // The first two rows, their columns' padding aside.
    let shown = |e: &Effective| {
        let rows = render(e, 200_000, &[]);
        rows.lines().take(2).map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
    };
    let e = resolve(&FlagSettings::default(), &env(&[("OPENAI_API_KEY", "k")]), &ConfigFile::default()).unwrap();
    assert_eq!(
        shown(&e),
        "provider openai (default: the first key found, OPENAI_API_KEY)\nmodel gpt-4.1 (default for openai)"
    );
    // Merged from a project's file over the profile's: each says which.
    let merged = file(r#"{"provider": "ollama", "model": "qwen3", "context": {"strategy": "compact"}}"#);
    let project = serde_json::json!({"model": "qwen3", "context": {"strategy": "compact"}});
    let mut e = resolve(&FlagSettings::default(), &env(&[]), &merged).unwrap();
    mark_project(&mut e, project.as_object().unwrap());
    assert_eq!(e.provider.origin, Origin::File("provider"));
    assert_eq!(e.model.origin, Origin::Project("model"));
    assert_eq!(e.context_strategy.origin, Origin::Project("context.strategy"));
    assert_eq!(shown(&e), "provider ollama (config.json provider)\nmodel qwen3 (project .seri/config.json model)");
    let flags = FlagSettings { model: Some("llama3.1".into()), ..FlagSettings::default() };
    let mut e = resolve(&flags, &env(&[]), &merged).unwrap();
    mark_project(&mut e, project.as_object().unwrap());
    assert_eq!(e.model, Sourced { value: Some("llama3.1".into()), origin: Origin::Flag("--model") });
}

#[test]
fn the_store_url_comes_from_the_variable_then_the_file_and_an_empty_variable_is_refused() {
    let file = ConfigFile { store: StoreConfig { url: Some("sqlite:/from/file.db".into()) }, ..ConfigFile::default() };
    let url = store_url(&env(&[("SERI_STORE_URL", "sqlite:/from/env.db")]), &file).unwrap();
    assert_eq!(url, Sourced { value: Some("sqlite:/from/env.db".into()), origin: Origin::Env("SERI_STORE_URL") });
    let url = store_url(&env(&[]), &file).unwrap();
    assert_eq!(url, Sourced { value: Some("sqlite:/from/file.db".into()), origin: Origin::File("store.url") });
    assert_eq!(store_url(&env(&[]), &ConfigFile::default()).unwrap().origin, Origin::Default);
    for empty in ["", "  "] {
        let error = store_url(&env(&[("SERI_STORE_URL", empty)]), &file).unwrap_err();
        assert!(error.starts_with("SERI_STORE_URL is set but empty: "), "{error}");
    }
    let error = store_url(&env(&[("SERI_STORE_URL", "mysql://root:hunter2@db/seri")]), &file).unwrap_err();
    assert!(error.starts_with("SERI_STORE_URL: store URL `mysql://root@db/seri` is not usable: "), "{error}");
    assert!(error.contains("`mysql:`") && !error.contains("hunter2"), "{error}");
}

#[test]
fn bad_values_name_where_they_came_from() {
    let err =
        resolve(&FlagSettings::default(), &env(&[("SERI_MAX_TURNS", "lots")]), &ConfigFile::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "environment SERI_MAX_TURNS is \"lots\", which is not valid: expected a positive number of turns"
    );
    let err =
        resolve(&FlagSettings::default(), &env(&[]), &file(r#"{"context": {"strategy": "squash"}}"#)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "config.json context.strategy is \"squash\", which is not valid: expected continue or compact"
    );
}

#[test]
fn the_trajectory_retention_window_is_read_from_the_file() {
    let cfg = file(r#"{"trajectories": {"retentionDays": 7}}"#);
    assert_eq!(cfg.trajectories.retention_days, Some(7));
    assert_eq!(file("{}").trajectories.retention_days, None);
    let err = ConfigFile::parse(Path::new("c.json"), r#"{"trajectories": {"retention": 7}}"#).unwrap_err();
    assert!(err.to_string().contains("trajectories.retention is not a setting"), "{err}");
}

#[test]
fn subagent_settings_parse_and_typos_are_refused() {
    let cfg = file(r#"{"subagents": {"maxTurns": 10, "parallel": 2, "maxDepth": 2}}"#);
    let refused = |text: &str| ConfigFile::parse(Path::new("config.json"), text).unwrap_err().to_string();
    assert_eq!(
        refused(r#"{"providers": {"opnai": {"baseUrl": "x"}}}"#),
        "config.json: providers.opnai: not a provider; expected one of: script, openai, openrouter, anthropic, ollama, openai-compatible"
    );
    assert!(
        refused(r#"{"permissions": {"bsh": "allow"}}"#).contains("bsh"),
        "{}",
        refused(r#"{"permissions": {"bsh": "allow"}}"#)
    );
    assert_eq!(
        refused(r#"{"subagents": {"parallel": 0}}"#),
        "config.json: subagents.parallel is 0: at least 1 child must be able to run at a time"
    );
    assert_eq!(
        refused(r#"{"subagents": {"maxTurns": 0}}"#),
        "config.json: subagents.maxTurns is 0: a child needs at least 1 turn to answer"
    );
    assert_eq!(cfg.subagents, SubagentsConfig { max_turns: Some(10), parallel: Some(2), max_depth: Some(2) });
    assert!(ConfigFile::parse(Path::new("c.json"), r#"{"subagents": {"paralel": 2}}"#).is_err());
}

#[test]
fn unknown_keys_in_the_file_are_refused_by_name() {
    let err = ConfigFile::parse(Path::new("/p/config.json"), r#"{"context": {"stratgy": "compact"}}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/p/config.json: context.stratgy is not a setting; the settings here are strategy, window, keepTokens (line 1, column 22)"
    );
}

#[test]
fn a_wrong_value_names_its_key_and_what_was_expected_in_words() {
    let refused = |text: &str| ConfigFile::parse(Path::new("config.json"), text).unwrap_err().to_string();
    assert_eq!(
        refused(r#"{"maxTurns": "lots"}"#),
        "config.json: maxTurns is the text \"lots\"; expected a whole number from 0 to 4294967295 (line 1, column 19)"
    );
    assert_eq!(refused(r#"{"model": "x""#), "config.json: not valid JSON (line 1, column 13)");
    assert_eq!(refused(r#"{"model": 3}"#), "config.json: model is the number 3; expected a string (line 1, column 11)");
    // Never the parser's own terms: a Rust type, `sequence`, `map`, backticks.
    for (text, said) in [
        (r#"{"temperature": "hot"}"#, "temperature is the text \"hot\"; expected a number"),
        (r#"{"context": {"window": -5}}"#, "context.window is the number -5; expected a whole number, 0 or more"),
        (r#"{"context": []}"#, "context is a list; expected an object"),
        (r#"{"subagents": {"parallel": 1.5}}"#, "subagents.parallel is the number 1.5; expected a whole number"),
        (r#"{"sandbox": {"network": "yes"}}"#, "sandbox.network is the text \"yes\"; expected a boolean"),
        (r#"{"trajectories": {"retentionDays": true}}"#, "trajectories.retentionDays is true; expected a whole"),
        (r#"{"providers": {"openrouter": {"pin": {"order": "x"}}}}"#, "pin.order is the text \"x\"; expected a list"),
        (r#"{"maxTurns": 99999999999}"#, "maxTurns is the number 99999999999; expected a whole number from 0 to"),
    ] {
        let message = refused(text);
        assert!(message.contains(said), "{text}: {message}");
        for internal in ["u32", "u64", "usize", "f64", "sequence", "struct", "integer", "`"] {
            assert!(!message.contains(internal), "{text}: {message}");
        }
    }
    assert_eq!(refused(r#"{"modle": "x"}"#).split(';').next(), Some("config.json: modle is not a setting"));
}

#[test]
fn sampling_knobs_and_reasoning_effort_resolve_and_out_of_range_values_are_refused() {
    let cfg = file(r#"{"temperature": 0.2, "topP": 0.9, "maxOutputTokens": 2048, "reasoningEffort": "low"}"#);
    let flags = FlagSettings { reasoning_effort: Some("high".into()), ..FlagSettings::default() };
    let e = resolve(&flags, &env(&[("SERI_TEMPERATURE", "0.7")]), &cfg).unwrap();
    assert_eq!(e.temperature, Sourced { value: Some(0.7), origin: Origin::Env("SERI_TEMPERATURE") });
    assert_eq!(e.top_p, Sourced { value: Some(0.9), origin: Origin::File("topP") });
    assert_eq!(e.max_output_tokens.value, Some(2048));
    assert_eq!(
        e.reasoning_effort,
        Sourced { value: Some(ReasoningEffort::High), origin: Origin::Flag("--reasoning-effort") }
    );
    let unset = resolve(&FlagSettings::default(), &env(&[]), &ConfigFile::default()).unwrap();
    assert_eq!((unset.temperature.value, unset.top_p.value, unset.reasoning_effort.value), (None, None, None));

    let refused = |text: &str| resolve(&FlagSettings::default(), &env(&[]), &file(text)).unwrap_err().to_string();
    for (text, expected) in [
        (r#"{"temperature": 2.5}"#, "a number from 0 to 2"),
        (r#"{"topP": 0}"#, "a number above 0, at most 1"),
        (r#"{"topP": 1.5}"#, "a number above 0, at most 1"),
        (r#"{"maxOutputTokens": 0}"#, "a positive number of tokens"),
        (r#"{"reasoningEffort": "extreme"}"#, "minimal, low, medium or high"),
    ] {
        let message = refused(text);
        assert!(message.contains(expected), "{text}: {message}");
    }
}
