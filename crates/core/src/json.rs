//! JSON whose keys come out sorted, where that is promised: a digest that
//! must not depend on how a value was built, a document whose output is
//! stable (trajectories), the transcript a summarizer reads. serde_json
//! keeps insertion order in seri's builds (`preserve_order`), so these
//! sort explicitly.

use serde_json::{Map, Value};

/// `value` with every object's keys sorted, at every level.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::with_capacity(map.len());
            for key in keys {
                out.insert(key.clone(), sorted(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// `value` as compact JSON with its keys sorted at every level.
pub fn sorted_string(value: &Value) -> String {
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sorted_at_every_level_whatever_order_they_were_built_in() {
        let value = serde_json::json!({"b": 1, "a": {"d": [{"z": 0, "y": 1}], "c": null}});
        assert_eq!(sorted_string(&value), r#"{"a":{"c":null,"d":[{"y":1,"z":0}]},"b":1}"#);
    }
}
