//! The normalisation rules, case by case, and their properties on arbitrary
//! JSON: they never panic and normalising twice equals normalising once.

use proptest::prelude::*;
use serde_json::{Value, json};
use seri_tools::{normalize_continue_session_input, normalize_extra_value, parse_continue_session_input};

#[track_caller]
fn check_hoist(input: Value, expected: Value) {
    let once = normalize_continue_session_input(input);
    assert_eq!(once, expected);
    assert_eq!(normalize_continue_session_input(once.clone()), once, "not idempotent");
}

#[test]
fn hoists_each_nested_key_when_the_top_level_lacks_it() {
    for key in ["sources", "transfer", "description"] {
        check_hoist(
            json!({"title": "t", "handoff": {"purpose": "p", key: ["x"]}}),
            json!({"title": "t", key: ["x"], "handoff": {"purpose": "p"}}),
        );
        // A top-level null counts as lacking it.
        check_hoist(json!({key: null, "handoff": {key: "x"}}), json!({key: "x", "handoff": {}}));
    }
    check_hoist(
        json!({"handoff": {"sources": [1], "transfer": {"plan": "omit"}, "description": "d", "purpose": "p"}}),
        json!({"sources": [1], "transfer": {"plan": "omit"}, "description": "d", "handoff": {"purpose": "p"}}),
    );
}

#[test]
fn leaves_what_it_should_not_touch() {
    // Top level present: both copies stay; the nested one becomes an extra section.
    check_hoist(
        json!({"description": "top", "handoff": {"description": "nested"}}),
        json!({"description": "top", "handoff": {"description": "nested"}}),
    );
    // A nested null says nothing and is dropped.
    check_hoist(json!({"handoff": {"sources": null}}), json!({"handoff": {}}));
    // Other keys are never hoisted.
    check_hoist(
        json!({"handoff": {"title": "t", "reason": "refocus"}}),
        json!({"handoff": {"title": "t", "reason": "refocus"}}),
    );
    // Shapes the parser refuses pass through unchanged.
    for input in [json!(null), json!([1]), json!("x"), json!({"handoff": "prose"}), json!({"description": "d"})] {
        check_hoist(input.clone(), input);
    }
}

#[track_caller]
fn check_extra(value: Value, expected: &[&str]) {
    assert_eq!(normalize_extra_value(&value), expected, "{value}");
}

#[test]
fn extra_values_become_lists_of_strings() {
    check_extra(json!("  keep me  "), &["keep me"]);
    check_extra(json!("   "), &[]);
    check_extra(json!(42), &["42"]);
    check_extra(json!(-2.5), &["-2.5"]);
    check_extra(json!(true), &["true"]);
    check_extra(json!(false), &["false"]);
    check_extra(json!(null), &[]);
    check_extra(json!([]), &[]);
    check_extra(json!({}), &[]);
    check_extra(json!(["a", ["b", ["c", null]], 1]), &["a", "b", "c", "1"]);
    check_extra(
        json!({"db": {"host": "x", "ports": [1, 2]}, "ok": true}),
        &["db.host: x", "db.ports: 1", "db.ports: 2", "ok: true"],
    );
    check_extra(json!([{"k": "v"}, {"k": null}]), &["k: v"]);
}

#[test]
fn an_empty_extra_section_is_dropped() {
    let input = parse_continue_session_input(json!({
        "reason": "refocus", "title": "t", "description": "d",
        "handoff": {"purpose": "p", "currentRequest": "r", "nothing": null, "blank": " ", "none": [], "kept": 0}
    }))
    .unwrap();
    assert_eq!(input.handoff.extra.keys().collect::<Vec<_>>(), ["kept"]);
}

/// Arbitrary JSON, up to a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Keys drawn mostly from the ones the rules care about.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &["handoff", "sources", "transfer", "description", "title", "reason", "purpose", "plan", "kind"][..]
        )
        .prop_map(str::to_owned),
        "[a-zA-Z]{1,6}",
    ]
}

/// Inputs shaped like calls, with a `handoff` that nests hoistable keys.
fn call_like() -> impl Strategy<Value = Value> {
    (prop::collection::btree_map(key(), json_value(), 0..5), prop::collection::btree_map(key(), json_value(), 0..5))
        .prop_map(|(mut top, handoff)| {
            top.insert("handoff".to_owned(), Value::Object(handoff.into_iter().collect()));
            Value::Object(top.into_iter().collect())
        })
}

proptest! {
    #[test]
    fn normalising_is_idempotent_on_arbitrary_json(input in prop_oneof![json_value(), call_like()]) {
        let once = normalize_continue_session_input(input);
        prop_assert_eq!(normalize_continue_session_input(once.clone()), once);
    }

    #[test]
    fn parsing_never_panics(input in prop_oneof![json_value(), call_like()]) {
        let _ = parse_continue_session_input(input);
    }

    #[test]
    fn extra_values_never_panic_and_hold_no_blank_lines(value in json_value()) {
        for line in normalize_extra_value(&value) {
            prop_assert!(!line.trim().is_empty());
        }
    }

    #[test]
    fn hoisting_loses_nothing(input in call_like()) {
        // Every hoistable key ends up somewhere: at the top, or still nested.
        let before = input.clone();
        let after = normalize_continue_session_input(input);
        for key in ["sources", "transfer", "description"] {
            let nested = before["handoff"].get(key).filter(|v| !v.is_null());
            if let Some(value) = nested {
                let kept = after.get(key) == Some(value) || after["handoff"].get(key) == Some(value);
                prop_assert!(kept, "{} lost", key);
            }
        }
    }
}
