//! Parsing normalised `continue_session` input into typed values. Pure: it
//! checks shapes only; whatever needs the store or the file system (threads,
//! seqs, memory files, the plan) is checked by `sources.rs` and the tool.

use serde_json::Value;
use seri_core::{ContinueReason, Handoff, PlanTransfer, Seq, Transfer};

use super::normalize::{normalize_continue_session_input, normalize_extra_value};
use crate::error::InputError;
use crate::input::{Obj, index, one_line, prose, type_name};
use crate::verbs::{MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS};

/// The top-level fields of the input.
pub const INPUT_FIELDS: [&str; 7] = ["reason", "title", "description", "handoff", "sources", "transfer", "dryRun"];

/// The seven named handoff sections, as the model writes them.
pub const HANDOFF_SECTIONS: [&str; 7] =
    ["purpose", "currentRequest", "establishedFacts", "decisions", "openQuestions", "nextActions", "cautions"];

/// The `memory` source prefix: what `~/memory/…` resolves against is the
/// profile's `memory/` folder.
pub const MEMORY_PREFIX: &str = "~/memory/";

/// The address schemes a `resource` source may use.
pub const RESOURCE_SCHEMES: [&str; 4] = ["hm", "ipfs", "http", "https"];

/// The input, well formed but not yet checked against the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueSessionInput {
    /// Why.
    pub reason: ContinueReason,
    /// The successor's title, trimmed.
    pub title: String,
    /// The successor's description, trimmed.
    pub description: String,
    /// The handoff, extra keys normalised.
    pub handoff: Handoff,
    /// The sources as written, in order.
    pub sources: Vec<SourceInput>,
    /// What the model asked for; `plan` is resolved against the session later.
    pub transfer: Transfer,
    /// Only estimate: say what a continuation with this input would carry,
    /// and create nothing.
    pub dry_run: bool,
}

/// A source as written, before its thread is found or its file checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceInput {
    /// An `hm://`, `ipfs://`, `http://` or `https://` address.
    Resource {
        /// The address, trimmed.
        uri: String,
    },
    /// A `~/memory/…` path, syntactically checked.
    Memory {
        /// The path as written, trimmed.
        path: String,
    },
    /// A seq range of a thread.
    SessionEvents {
        /// The thread as written; `None` for this session.
        thread: Option<String>,
        /// The first seq.
        from_seq: Seq,
        /// The last seq, inclusive.
        to_seq: Seq,
    },
    /// One event of a thread.
    SessionEvent {
        /// The thread as written; `None` for this session.
        thread: Option<String>,
        /// The seq.
        seq: Seq,
    },
}

/// Normalises (see `normalize.rs`) and parses the input.
pub fn parse_continue_session_input(raw: Value) -> Result<ContinueSessionInput, InputError> {
    let value = normalize_continue_session_input(raw);
    let top = Obj::new(&value, "")?;
    top.only(&INPUT_FIELDS, "; handoff sections go inside `handoff`")?;
    let reason = parse_reason(top.req_str("reason")?)?;
    let title = one_line(top.req_str("title")?, "title", MAX_TITLE_CHARS)?;
    let description = prose(top.req_str("description")?, "description", MAX_DESCRIPTION_CHARS)?;
    let handoff = parse_handoff(top.get("handoff").ok_or_else(|| InputError::new("handoff", "required"))?)?;
    let sources = match top.get("sources") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_source(item, &index("sources", i)))
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(InputError::new("sources", format!("expected an array, got {}", type_name(other)))),
    };
    let transfer = match top.get("transfer") {
        None => Transfer::default(),
        Some(value) => parse_transfer(value)?,
    };
    let dry_run = top.opt_bool("dryRun")?.unwrap_or(false);
    Ok(ContinueSessionInput { reason, title, description, handoff, sources, transfer, dry_run })
}

fn parse_reason(text: &str) -> Result<ContinueReason, InputError> {
    ContinueReason::ALL.into_iter().find(|r| r.as_str() == text.trim()).ok_or_else(|| {
        let names: Vec<&str> = ContinueReason::ALL.iter().map(|r| r.as_str()).collect();
        InputError::new("reason", format!("`{text}` is not a reason; expected one of: {}", names.join(", ")))
    })
}

fn parse_handoff(value: &Value) -> Result<Handoff, InputError> {
    let obj = Obj::new(value, "handoff")?;
    let text = |key: &str| -> Result<Option<String>, InputError> {
        Ok(obj.opt_str(key)?.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned))
    };
    let list = |key: &str| -> Result<Vec<String>, InputError> {
        match obj.get(key) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => {
                Ok(Some(s.trim()).filter(|s| !s.is_empty()).map(str::to_owned).into_iter().collect())
            }
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| match item {
                    Value::String(s) => Some(s.trim()).filter(|s| !s.is_empty()).map(|s| Ok(s.to_owned())),
                    Value::Null => None,
                    other => Some(Err(InputError::new(
                        index(&obj.path(key), i),
                        format!("expected a string, got {}", type_name(other)),
                    ))),
                })
                .collect(),
            Some(other) => {
                Err(InputError::new(obj.path(key), format!("expected an array of strings, got {}", type_name(other))))
            }
        }
    };
    let mut handoff = Handoff {
        purpose: text("purpose")?,
        current_request: text("currentRequest")?,
        established_facts: list("establishedFacts")?,
        decisions: list("decisions")?,
        open_questions: list("openQuestions")?,
        next_actions: list("nextActions")?,
        cautions: list("cautions")?,
        extra: Default::default(),
    };
    if let Value::Object(entries) = value {
        for (key, item) in entries.iter().filter(|(k, _)| !HANDOFF_SECTIONS.contains(&k.as_str())) {
            let lines = normalize_extra_value(item);
            if !lines.is_empty() {
                handoff.extra.insert(key.clone(), lines);
            }
        }
    }
    if handoff == Handoff::default() {
        return Err(InputError::new(
            "handoff",
            "says nothing: write at least `purpose` and `currentRequest` for a colleague who has read nothing",
        ));
    }
    // The successor answers the person's message knowing only this: without
    // what the work is for and what is asked now, it reads "(none)".
    for (key, missing) in
        [("purpose", handoff.purpose.is_none()), ("currentRequest", handoff.current_request.is_none())]
    {
        if missing {
            return Err(InputError::new(
                obj.path(key),
                "required: write at least `purpose` and `currentRequest` for a colleague who has read nothing",
            ));
        }
    }
    Ok(handoff)
}

fn parse_source(value: &Value, path: &str) -> Result<SourceInput, InputError> {
    // A bare string is accepted for the two kinds whose form is unmistakable.
    if let Value::String(text) = value {
        let text = text.trim();
        return if text.starts_with(MEMORY_PREFIX) || text.starts_with("~/") || text.starts_with('/') {
            parse_memory_path(text, path).map(|path| SourceInput::Memory { path })
        } else if text.contains("://") {
            parse_resource_uri(text, path).map(|uri| SourceInput::Resource { uri })
        } else {
            Err(InputError::new(
                path,
                format!(
                    "`{text}` is not a source; write an object such as {{\"kind\": \"session_events\", \"fromSeq\": 3, \"toSeq\": 9}}"
                ),
            ))
        };
    }
    let obj = Obj::new(value, path)?;
    let kind = obj.req_str("kind")?;
    let thread = |obj: &Obj<'_>| -> Result<Option<String>, InputError> {
        Ok(obj.opt_str("sessionId")?.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned))
    };
    match kind {
        "resource" => {
            obj.only(&["kind", "uri"], "")?;
            parse_resource_uri(obj.req_str("uri")?, &obj.path("uri")).map(|uri| SourceInput::Resource { uri })
        }
        "memory" => {
            obj.only(&["kind", "path"], "")?;
            parse_memory_path(obj.req_str("path")?, &obj.path("path")).map(|path| SourceInput::Memory { path })
        }
        "session_events" => {
            obj.only(&["kind", "sessionId", "fromSeq", "toSeq"], "")?;
            let from_seq = obj.req_u64("fromSeq", 1)?;
            let to_seq = obj.req_u64("toSeq", 1)?;
            if to_seq < from_seq {
                return Err(InputError::new(obj.path("toSeq"), format!("{to_seq} is before fromSeq {from_seq}")));
            }
            Ok(SourceInput::SessionEvents { thread: thread(&obj)?, from_seq: Seq(from_seq), to_seq: Seq(to_seq) })
        }
        "session_event" => {
            obj.only(&["kind", "sessionId", "seq"], "")?;
            Ok(SourceInput::SessionEvent { thread: thread(&obj)?, seq: Seq(obj.req_u64("seq", 1)?) })
        }
        other => Err(InputError::new(
            obj.path("kind"),
            format!("`{other}` is not a source kind; expected one of: resource, memory, session_events, session_event"),
        )),
    }
}

/// Checks an address's scheme and shape.
fn parse_resource_uri(uri: &str, field: &str) -> Result<String, InputError> {
    let uri = uri.trim();
    let refuse = || {
        InputError::new(field, format!("`{uri}` is not an address: expected hm://…, ipfs://…, http://… or https://…"))
    };
    let (scheme, rest) = uri.split_once("://").ok_or_else(refuse)?;
    let scheme_ok = RESOURCE_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme));
    let rest_ok =
        !rest.is_empty() && !rest.starts_with('/') && !rest.chars().any(|c| c.is_whitespace() || c.is_control());
    if scheme_ok && rest_ok { Ok(uri.to_owned()) } else { Err(refuse()) }
}

/// Checks a memory path's form; whether it exists, and stays inside the
/// memory folder once symlinks are followed, is checked against the disk.
fn parse_memory_path(path: &str, field: &str) -> Result<String, InputError> {
    let path = path.trim();
    let Some(rest) = path.strip_prefix(MEMORY_PREFIX) else {
        let problem = if path.starts_with('/') {
            format!("`{path}` is an absolute path; memory sources are `~/memory/…` paths")
        } else {
            format!("`{path}` is not in your memory folder; memory sources are `~/memory/…` paths")
        };
        return Err(InputError::new(field, problem));
    };
    if rest.trim_matches('/').is_empty() {
        return Err(InputError::new(field, "names the memory folder itself; name a file in it"));
    }
    if rest.starts_with('/') {
        return Err(InputError::new(field, format!("`{path}` is an absolute path; write `~/memory/<file>`")));
    }
    Ok(path.to_owned())
}

/// `transfer`: `{plan?: carry | close | omit}`.
fn parse_transfer(value: &Value) -> Result<Transfer, InputError> {
    let obj = Obj::new(value, "transfer")?;
    obj.only(&["plan"], "")?;
    let plan = match obj.opt_str("plan")? {
        None => None,
        Some("carry") => Some(PlanTransfer::Carry),
        Some("close") => Some(PlanTransfer::Close),
        Some("omit") => Some(PlanTransfer::Omit),
        Some(other) => {
            return Err(InputError::new(
                "transfer.plan",
                format!("`{other}` is not a plan transfer; expected carry, close or omit"),
            ));
        }
    };
    Ok(Transfer { plan })
}
