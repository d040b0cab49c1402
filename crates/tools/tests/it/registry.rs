//! The registry's own rules: unique names, specs in registration order, and
//! the tool descriptions coming from seri-prompt's verb contracts.

use std::sync::Arc;

use seri_prompt::text::verbs;
use seri_tools::{ContinueSession, Status, ToolRegistry};

#[test]
fn names_are_unique() {
    let mut registry = ToolRegistry::with_session_verbs();
    let error = registry.register(Arc::new(Status)).unwrap_err();
    assert_eq!(error.to_string(), "a tool named `status` is already registered");
    let mut empty = ToolRegistry::new();
    empty.register(Arc::new(ContinueSession)).unwrap();
    assert_eq!(format!("{empty:?}"), "[\"continue_session\"]");
}

#[test]
fn descriptions_are_the_verb_contracts() {
    let registry = ToolRegistry::with_session_verbs();
    let description = |name: &str| registry.get(name).map(|t| t.description().to_owned()).unwrap();
    assert_eq!(description("continue_session"), verbs::CONTINUE_SESSION);
    assert_eq!(description("status"), verbs::STATUS);
    assert_eq!(description("read"), verbs::READ);
    assert_eq!(description("plan"), verbs::PLAN);
}

#[test]
fn the_handoff_schema_accepts_keys_it_does_not_name() {
    let schema = ContinueSession.input_schema_for_test();
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema["properties"]["handoff"].get("additionalProperties").is_none());
}

trait SchemaForTest {
    fn input_schema_for_test(&self) -> serde_json::Value;
}

impl SchemaForTest for ContinueSession {
    fn input_schema_for_test(&self) -> serde_json::Value {
        seri_tools::Tool::input_schema(self)
    }
}
