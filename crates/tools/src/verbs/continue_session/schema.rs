//! The JSON schema of `continue_session`'s input.
//!
//! `handoff` deliberately has no `additionalProperties: false`: any key the
//! agent invents is kept as an extra section, and keys models nest there by
//! mistake (`sources`, `transfer`, `description`) are hoisted, not refused.

use serde_json::{Value, json};

use super::parse::RESOURCE_SCHEMES;

pub(super) fn input_schema() -> Value {
    let strings = |description: &str| json!({"type": "array", "items": {"type": "string"}, "description": description});
    json!({
        "type": "object",
        "properties": {
            "reason": {
                "type": "string",
                "enum": ["topic_change", "phase_change", "refocus", "context_pressure", "user_request"],
                "description": "Why the conversation moves to a successor."
            },
            "dryRun": {
                "type": "boolean",
                "description": "true: create nothing; the result says what a continuation with this input would carry (its size, what fits, what would be left out) and which ranges are worth citing."
            },
            "title": {
                "type": "string",
                "description": "The successor's title: what the whole new session is about, in a few words."
            },
            "description": {
                "type": "string",
                "description": "The successor's description: where the work stands now."
            },
            "handoff": {
                "type": "object",
                "description": "Prose for a colleague who has read nothing. Other keys become their own sections.",
                "properties": {
                    "purpose": {"type": "string", "description": "What the work is for."},
                    "currentRequest": {"type": "string", "description": "What the person wants right now."},
                    "establishedFacts": strings("What is known and verified, quoted exactly."),
                    "decisions": strings("What was decided, and why."),
                    "openQuestions": strings("What is still unknown."),
                    "nextActions": strings("The concrete next steps, in order."),
                    "cautions": strings("Traps, unresolved side effects, things not to do.")
                }
            },
            "sources": {
                "type": "array",
                "description": "Exact pointers the successor can follow.",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": ["session_events", "session_event", "memory", "resource"]},
                        "sessionId": {
                            "type": "string",
                            "description": "session_events, session_event: a thread id or unique prefix; defaults to this session."
                        },
                        "fromSeq": {"type": "integer", "minimum": 1, "description": "session_events: first seq."},
                        "toSeq": {"type": "integer", "minimum": 1, "description": "session_events: last seq, inclusive."},
                        "seq": {"type": "integer", "minimum": 1, "description": "session_event: the seq."},
                        "path": {"type": "string", "description": "memory: a ~/memory/… path that exists."},
                        "uri": {
                            "type": "string",
                            "description": format!("resource: an address with scheme {}.", RESOURCE_SCHEMES.map(|s| format!("{s}://")).join(", "))
                        }
                    },
                    "required": ["kind"],
                    "additionalProperties": false
                }
            },
            "transfer": {
                "type": "object",
                "properties": {
                    "plan": {
                        "type": "string",
                        "enum": ["carry", "close", "omit"],
                        "description": "carry: the successor takes the plan over; close: end it here; omit: leave it here. Default: carry when steps are unfinished."
                    }
                },
                "additionalProperties": false
            }
        },
        "required": ["reason", "title", "description", "handoff"],
        "additionalProperties": false
    })
}
