//! The rules table: one case per rule of the tools issue, each a call
//! through the registry (given this world / when this call / then this
//! result). Every case states the part of the result it is about; the whole
//! table is also snapshotted, so a reviewer reads every result in one file.

use std::fmt::Write as _;

use serde_json::{Value, json};
use seri_core::SessionId;
use seri_prompt::ContextStrategy;
use seri_tools::{
    ContinuationRequest, DelegationRequest, RunContext, RunKind, RunRef, ToolAction, ToolContext, ToolRegistry,
};

use crate::fixture::*;

/// What a case does.
enum Action {
    /// List the tools available to the run.
    List,
    /// Call a tool.
    Call(&'static str, Value),
}

/// What a case expects: success or failure, and text the result must
/// contain (or, for `Only`, be).
enum Expect {
    Ok(&'static str),
    Only(&'static str),
    Err(&'static str),
}

struct Case {
    name: &'static str,
    session: SessionId,
    run: Option<RunKind>,
    strategy: ContextStrategy,
    parked: u32,
    action: Action,
    expect: Expect,
}

fn call(name: &'static str, tool: &'static str, input: Value, expect: Expect) -> Case {
    Case {
        name,
        session: CURRENT,
        run: Some(RunKind::Interactive),
        strategy: ContextStrategy::Continue,
        parked: 0,
        action: Action::Call(tool, input),
        expect,
    }
}

fn list(name: &'static str, run: Option<RunKind>, expect: Expect) -> Case {
    Case { action: Action::List, run, ..call(name, "", Value::Null, expect) }
}

impl Case {
    fn in_session(mut self, session: SessionId) -> Self {
        self.session = session;
        self
    }

    fn run(mut self, run: Option<RunKind>) -> Self {
        self.run = run;
        self
    }

    fn strategy(mut self, strategy: ContextStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    fn parked(mut self, parked: u32) -> Self {
        self.parked = parked;
        self
    }
}

/// A valid continue_session input, to vary one thing at a time.
fn continuing(extra: Value) -> Value {
    let mut input = json!({
        "reason": "phase_change",
        "title": "Creation transaction",
        "description": "Migration done; the atomic creation comes next.",
        "handoff": {"purpose": "Durable continuation edges.", "currentRequest": "Explain </excerpt> in titles."}
    });
    if let (Value::Object(base), Value::Object(more)) = (&mut input, extra) {
        for (k, v) in more {
            base.insert(k, v);
        }
    }
    input
}

fn with_source(source: Value) -> Value {
    continuing(json!({"sources": [source]}))
}

fn cases() -> Vec<Case> {
    use Expect::{Err, Ok, Only};
    let delegated = Some(RunKind::DelegatedChild { parent_run_id: PARENT_RUN, depth: 1 });
    let typed = Some(RunKind::TypedChild { parent_run_id: PARENT_RUN, depth: 1 });
    let twin_prefix = "abcdef0";
    vec![
        // Availability.
        list("interactive run sees every verb", Some(RunKind::Interactive), Ok("continue_session, status, read, plan")),
        list("delegated child does not see continue_session", delegated, Ok("status, read, plan")),
        list("typed child does not see continue_session", typed, Ok("status, read, plan")),
        list("script never sees continue_session", Some(RunKind::Script), Ok("status, read, plan")),
        list("no run, no continue_session", None, Ok("status, read, plan")),
        list("compact strategy offers no continue_session", Some(RunKind::Interactive), Ok("status, read, plan"))
            .strategy(ContextStrategy::Compact),
        call("delegated child calling continue_session is refused", "continue_session", continuing(json!({})), Err("reports to its parent"))
            .run(delegated),
        call("typed child calling continue_session is refused", "continue_session", continuing(json!({})), Err("return_result"))
            .run(typed),
        call("script calling continue_session is refused", "continue_session", continuing(json!({})), Err("scripts never continue"))
            .run(Some(RunKind::Script)),
        call("call without a run is refused", "continue_session", continuing(json!({})), Err("no run to end")).run(None),
        call("unknown tool", "compact_now", json!({}), Err("no tool named `compact_now`")),
        // continue_session: shapes.
        call("valid call carries an unfinished plan by default", "continue_session", continuing(json!({})), Ok("plan: Carry (3 steps, owner None)")),
        call("nested description is hoisted", "continue_session",
            json!({"reason": "topic_change", "title": "T", "handoff": {"purpose": "p", "currentRequest": "r", "description": "from inside handoff"}}),
            Ok("description \"from inside handoff\"")),
        call("nested sources are hoisted", "continue_session",
            json!({"reason": "refocus", "title": "T", "description": "d",
                   "handoff": {"purpose": "p", "currentRequest": "r", "sources": [{"kind": "session_event", "seq": 6}]}}),
            Ok("{\"kind\":\"session_event\"")),
        call("nested transfer is hoisted", "continue_session",
            json!({"reason": "user_request", "title": "T", "description": "d",
                   "handoff": {"purpose": "p", "currentRequest": "r", "transfer": {"plan": "close"}}}),
            Ok("plan: Close")),
        call("top level wins over nested; nested copy kept as a section", "continue_session",
            json!({"reason": "topic_change", "title": "T", "description": "top",
                   "handoff": {"purpose": "p", "currentRequest": "r", "description": "nested"}}),
            Ok("\"extra\":{\"description\":[\"nested\"]}")),
        call("extra keys of every value type become lists of strings", "continue_session",
            continuing(json!({"handoff": {
                "purpose": "p",
                "currentRequest": "r",
                "risk": "  migration order  ",
                "budgetKiB": 32,
                "ratio": 2.5,
                "blocking": false,
                "notes": null,
                "links": ["a", ["b", ["c"]], 7, null, {"k": "v"}],
                "owners": {"store": "me", "db": {"host": "localhost", "ports": [5432, 5433]}},
                "blank": "   ",
                "empty": []
            }})),
            Ok("\"budgetKiB\"")),
        call("list sections accept a single string", "continue_session",
            continuing(json!({"handoff": {"purpose": "p", "currentRequest": "r", "decisions": "CBOR manifests"}})), Ok("CBOR manifests")),
        call("missing title", "continue_session", json!({"reason": "refocus", "description": "d", "handoff": {"purpose": "p"}}),
            Err("`title`: required")),
        call("blank description", "continue_session", continuing(json!({"description": "  "})), Err("`description`: empty")),
        call("multi-line title", "continue_session", continuing(json!({"title": "a\nb"})), Err("`title`: must be one line")),
        call("over-long title", "continue_session", continuing(json!({"title": "x".repeat(121)})), Err("121 characters; at most 120")),
        call("unknown reason", "continue_session", continuing(json!({"reason": "bored"})), Err("`reason`: `bored` is not a reason")),
        call("a handoff with only a purpose asks for the current request", "continue_session",
            continuing(json!({"handoff": {"purpose": "p"}})), Err("`handoff.currentRequest`: required")),
        call("a handoff with only a current request asks for the purpose", "continue_session",
            continuing(json!({"handoff": {"currentRequest": "r"}})), Err("`handoff.purpose`: required")),
        call("handoff is not an object", "continue_session", continuing(json!({"handoff": "see above"})),
            Err("`handoff`: expected an object, got a string")),
        call("handoff says nothing", "continue_session", continuing(json!({"handoff": {"notes": null, "decisions": []}})),
            Err("`handoff`: says nothing")),
        call("handoff list item of the wrong type", "continue_session",
            continuing(json!({"handoff": {"purpose": "p", "decisions": ["ok", 3]}})), Err("`handoff.decisions[1]`: expected a string")),
        call("unknown top-level field", "continue_session", continuing(json!({"nextActions": ["x"]})),
            Err("`nextActions`: not a field of this input")),
        call("sources is not an array", "continue_session", continuing(json!({"sources": {"kind": "memory"}})),
            Err("`sources`: expected an array")),
        // Sources.
        call("resource addresses of each scheme", "continue_session",
            continuing(json!({"sources": [
                {"kind": "resource", "uri": "hm://z6Mk/notes"}, {"kind": "resource", "uri": "ipfs://bafy"},
                {"kind": "resource", "uri": "http://localhost:8080/x"}, "https://sqlite.org/lang.html"]})),
            Ok("https://sqlite.org/lang.html")),
        call("resource with another scheme", "continue_session", with_source(json!({"kind": "resource", "uri": "ftp://x"})),
            Err("`sources[0].uri`: `ftp://x` is not an address")),
        call("resource without a host", "continue_session", with_source(json!({"kind": "resource", "uri": "https:///x"})),
            Err("is not an address")),
        call("memory file that exists", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory/projects/seri.md"})),
            Ok("~/memory/projects/seri.md")),
        call("memory path through a symlink that stays inside", "continue_session",
            with_source(json!({"kind": "memory", "path": "~/memory/alias.md"})), Ok("~/memory/notes.md")),
        call("memory path with .. that stays inside", "continue_session",
            with_source(json!({"kind": "memory", "path": "~/memory/projects/../notes.md"})), Ok("~/memory/notes.md")),
        call("memory path that does not exist", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory/todo.md"})),
            Err("`sources[0].path`: `~/memory/todo.md` does not exist in your memory folder")),
        call("memory path with .. that leaves", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory/../secret.md"})),
            Err("leaves your memory folder")),
        call("memory symlink that leaves", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory/escape.md"})),
            Err("leaves your memory folder")),
        call("memory symlinked folder that leaves", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory/up/secret.md"})),
            Err("leaves your memory folder")),
        call("memory absolute path", "continue_session", with_source(json!({"kind": "memory", "path": "/etc/passwd"})),
            Err("is an absolute path")),
        call("memory absolute path after the prefix", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory//etc/passwd"})),
            Err("is an absolute path")),
        call("memory path outside ~/memory/", "continue_session", with_source(json!("~/notes.md")),
            Err("is not in your memory folder")),
        call("memory folder itself", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory/"})),
            Err("names the memory folder itself")),
        call("session_events range of this thread", "continue_session",
            with_source(json!({"kind": "session_events", "fromSeq": 2, "toSeq": 5})), Ok("{\"kind\":\"session_events\",\"sessionId\":\"11111111-1111-1111-1111-111111111111\",\"fromSeq\":2,\"toSeq\":5}")),
        call("session_events of another own thread by unique prefix", "continue_session",
            with_source(json!({"kind": "session_events", "sessionId": "thread:2222", "fromSeq": 1, "toSeq": 3})),
            Ok("22222222-2222-2222-2222-222222222222")),
        call("session_events past the thread's end", "continue_session",
            with_source(json!({"kind": "session_events", "fromSeq": 2, "toSeq": 40})),
            Err("`sources[0].toSeq`: thread:11111111-1111-1111-1111-111111111111 has seqs 1–8; 40 is past its end")),
        call("session_events ending before it starts", "continue_session",
            with_source(json!({"kind": "session_events", "fromSeq": 5, "toSeq": 2})), Err("`sources[0].toSeq`: 2 is before fromSeq 5")),
        call("session_events from seq 0", "continue_session",
            with_source(json!({"kind": "session_events", "fromSeq": 0, "toSeq": 2})), Err("`sources[0].fromSeq`: expected a whole number of at least 1")),
        call("session_event past the end", "continue_session", with_source(json!({"kind": "session_event", "seq": 9})),
            Err("`sources[0].seq`")),
        call("session_events of another agent's thread", "continue_session",
            with_source(json!({"kind": "session_events", "sessionId": FOREIGN.to_string(), "fromSeq": 1, "toSeq": 1})),
            Err("no thread `33333333-3333-3333-3333-333333333333` among your threads")),
        call("session_events of a missing thread", "continue_session",
            with_source(json!({"kind": "session_events", "sessionId": "deadbeef", "fromSeq": 1, "toSeq": 1})),
            Err("no thread `deadbeef` among your threads")),
        call("session_events of an empty thread", "continue_session",
            with_source(json!({"kind": "session_events", "sessionId": EMPTY.to_string(), "fromSeq": 1, "toSeq": 1})),
            Err("has no events yet")),
        call("session_events with an ambiguous prefix", "continue_session",
            with_source(json!({"kind": "session_events", "sessionId": twin_prefix, "fromSeq": 1, "toSeq": 1})),
            Err("matches several of your threads")),
        call("unknown source kind", "continue_session", with_source(json!({"kind": "file", "path": "x"})),
            Err("`sources[0].kind`: `file` is not a source kind")),
        call("source with a field of another kind", "continue_session", with_source(json!({"kind": "memory", "path": "~/memory/notes.md", "seq": 2})),
            Err("`sources[0].seq`: not a field")),
        // transfer.plan.
        call("transfer.plan carry", "continue_session", continuing(json!({"transfer": {"plan": "carry"}})), Ok("plan: Carry (3 steps, owner None)")),
        call("transfer.plan omit", "continue_session", continuing(json!({"transfer": {"plan": "omit"}})), Ok("plan: Omit")),
        call("transfer.plan not a transfer", "continue_session", continuing(json!({"transfer": {"plan": "keep"}})),
            Err("`transfer.plan`: `keep` is not a plan transfer")),
        call("finished plan is omitted by default", "continue_session", continuing(json!({})), Ok("plan: Omit"))
            .in_session(PLAN_DONE),
        call("transfer.plan without a plan", "continue_session", continuing(json!({"transfer": {"plan": "carry"}})),
            Err("this session has no plan")).in_session(NO_PLAN),
        call("omit without a plan is what holds already", "continue_session", continuing(json!({"transfer": {"plan": "omit"}})),
            Ok("plan: Omit")).in_session(NO_PLAN),
        call("close without a plan closes nothing", "continue_session", continuing(json!({"transfer": {"plan": "close"}})),
            Ok("plan: Omit")).in_session(NO_PLAN),
        // Session state.
        call("right after a continuation: refused as a loop", "continue_session", continuing(json!({})), Err("just continued into"))
            .in_session(JUST_CONTINUED),
        call("no message from a person", "continue_session", continuing(json!({})), Err("no message from the person"))
            .in_session(NO_USER_MESSAGE),
        call("children still parked", "continue_session", continuing(json!({})), Err("2 child run(s)")).parked(2),
        // status.
        call("status sets title and description", "status", json!({"title": "Creation transaction", "description": "Writing it."}),
            Ok("title set to \"Creation transaction\"; description set to \"Writing it.\"")),
        call("status with the same title changes only the description", "status",
            json!({"title": "Store migrations", "description": "Migration 0003 written."}), Ok("append status_changed: {\"description\":\"Migration 0003 written.\",\"source\":\"agent\"}")),
        call("status restating both is refused", "status", json!({"title": "Store migrations", "description": "Writing migration 0003."}),
            Err("nothing changed: the session already has this title and description")),
        call("status restating the description is refused", "status", json!({"description": " Writing migration 0003. "}),
            Err("already has this description")),
        call("status with nothing", "status", json!({}), Err("input: give a title, a description, or both")),
        call("status with an unknown field", "status", json!({"name": "x"}), Err("`name`: not a field")),
        call("status with a blank title", "status", json!({"title": ""}), Err("`title`: empty")),
        // read.
        call("read this thread", "read", json!({"target": "thread:11111111-1111-1111-1111-111111111111"}), Ok("[8] assistant:")),
        call("read a range", "read", json!({"target": "thread:1111", "fromSeq": 3, "toSeq": 4}), Ok("showing seqs 3–4")),
        call("read by a prefix written without hyphens", "read", json!({"target": "thread:2222222222222"}), Ok("\"Design the continuation edge\", seqs 1–3")),
        call("read with a limit", "read", json!({"target": "thread:1111", "fromSeq": 2, "limit": 3}),
            Ok("… 4 more events up to seq 8; read again with fromSeq 5.")),
        call("read clamps toSeq to the end", "read", json!({"target": "thread:1111", "fromSeq": 7, "toSeq": 99}), Ok("showing seqs 7–8")),
        call("read the predecessor reports continuedTo", "read", json!({"target": "thread:22222222"}),
            Ok("continuedTo: thread:11111111-1111-1111-1111-111111111111 \"Store migrations\" (phase_change")),
        call("read an empty thread", "read", json!({"target": "thread:4444"}), Ok("no events yet")),
        call("read another agent's thread", "read", json!({"target": "thread:33333333-3333-3333-3333-333333333333"}),
            Err("no thread `33333333-3333-3333-3333-333333333333` among your threads")),
        call("read another agent's thread by prefix", "read", json!({"target": "thread:3333"}), Err("no thread `3333` among your threads")),
        call("read a missing thread", "read", json!({"target": "thread:0123"}), Err("no thread `0123` among your threads")),
        call("read an ambiguous prefix", "read", json!({"target": "thread:abcdef0"}), Err("matches several of your threads")),
        call("read something that is not a thread", "read", json!({"target": "src/main.rs"}), Err("write thread:<id>")),
        call("read a thread id that is not hex", "read", json!({"target": "thread:main"}), Err("is not a thread id")),
        call("read toSeq before fromSeq", "read", json!({"target": "thread:1111", "fromSeq": 5, "toSeq": 4}), Err("`toSeq`: 4 is before fromSeq 5")),
        call("read fromSeq past the end", "read", json!({"target": "thread:1111", "fromSeq": 9}), Err("`fromSeq`: 9 is past the thread's last seq, 8")),
        call("read limit 0", "read", json!({"target": "thread:1111", "limit": 0}), Err("`limit`: expected a whole number of at least 1")),
        call("read limit over the maximum", "read", json!({"target": "thread:1111", "limit": 5000}), Err("`limit`: 5000; at most 1000")),
        // plan.
        call("plan is written and owned by the run", "plan",
            json!({"steps": [{"text": "Write it", "status": "done"}, {"text": "Test it", "status": "in_progress"}, {"text": "Ship it"}]}),
            Ok("\"ownerRunId\":\"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa\"")),
        call("plan taken over from an earlier run", "plan",
            json!({"steps": [{"text": "Write migration 0003", "status": "done"}, {"text": "Add the creation transaction", "status": "in_progress"}, {"text": "Fault-injection tests"}]}),
            Ok("Plan updated: 3 steps, 1 done, 1 in progress, 1 pending.")),
        call("carried plan is adopted by the first call", "plan",
            json!({"steps": [{"text": "Write migration 0003", "status": "done"}, {"text": "Add the creation transaction", "status": "in_progress"}, {"text": "Fault-injection tests"}]}),
            Ok("\"ownerRunId\":\"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa\"")).in_session(CARRIED_PLAN),
        call("plan restated by its owner is refused", "plan", json!({"steps": [{"text": "Ship it", "status": "done"}]}),
            Err("the plan is already exactly this")).in_session(PLAN_DONE),
        call("plan with two steps in progress", "plan",
            json!({"steps": [{"text": "a", "status": "in_progress"}, {"text": "b", "status": "in_progress"}]}),
            Err("`steps[1].status`: steps[0] is already in_progress")),
        call("plan with an unknown status", "plan", json!({"steps": [{"text": "a", "status": "blocked"}]}),
            Err("`steps[0].status`: `blocked` is not a step status")),
        call("plan step of two lines", "plan", json!({"steps": [{"text": "a\nb"}]}), Err("`steps[0].text`: must be one line")),
        call("plan closed", "plan", json!({"steps": []}), Ok("Plan closed.")),
        call("closing a plan that does not exist", "plan", json!({"steps": []}), Err("there is no plan to close")).in_session(NO_PLAN),
        call("plan without steps", "plan", json!({}), Err("`steps`: required")),
        // delegate.
        list("interactive run sees delegate", Some(RunKind::Interactive), Only("available: continue_session, status, read, plan, delegate")),
        list("delegated child does not see delegate", delegated, Only("available: status, read, plan")),
        list("typed child does not see delegate", typed, Only("available: status, read, plan")),
        list("script does not see delegate", Some(RunKind::Script), Only("available: status, read, plan")),
        list("compact strategy still delegates", Some(RunKind::Interactive), Only("available: status, read, plan, delegate"))
            .strategy(ContextStrategy::Compact),
        call("delegate a task; the title is its first line", "delegate",
            json!({"task": "\n  Find every caller of parse_header.\nReport file:line for each."}),
            Ok("delegate: title \"Find every caller of parse_header.\", typed false, tools all")),
        call("delegate with tools and a result schema", "delegate",
            json!({"task": "Count TODOs", "tools": ["grep", " read_file "], "resultSchema": {
                "type": "object", "required": ["count"], "additionalProperties": false,
                "properties": {"count": {"type": "integer", "description": "How many."}, "files": {"type": "array", "items": {"type": "string"}}}}}),
            Ok("typed true, tools [\"grep\",\"read_file\"]")),
        call("delegate with an over-long first line cuts the title", "delegate", json!({"task": "word ".repeat(40)}),
            Ok("word word word word word word word word word word word word word word word word…\"")),
        call("delegate without a task", "delegate", json!({"tools": []}), Err("`task`: required")),
        call("delegate with a blank task", "delegate", json!({"task": " \n "}), Err("`task`: empty")),
        call("delegate with an unknown field", "delegate", json!({"task": "t", "model": "small"}), Err("`model`: not a field of this input")),
        call("delegate with tools that are not a list", "delegate", json!({"task": "t", "tools": "grep"}),
            Err("`tools`: expected an array, got a string")),
        call("delegate naming a tool twice", "delegate", json!({"task": "t", "tools": ["grep", "list", "grep"]}),
            Err("`tools[2]`: `grep` is named twice")),
        call("delegate naming a tool with a number", "delegate", json!({"task": "t", "tools": [3]}),
            Err("`tools[0]`: expected a tool name, got a number")),
        call("delegate with a schema keyword seri does not check", "delegate",
            json!({"task": "t", "resultSchema": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}}),
            Err("`resultSchema.properties.email.format`: `format` is not supported in a result schema")),
        call("delegate with an unknown type name", "delegate", json!({"task": "t", "resultSchema": {"type": "list"}}),
            Err("`resultSchema.type`: expected one of object, array, string, number, integer, boolean, null (or a list of them), got \"list\"")),
        call("delegate with a schema that is not an object", "delegate", json!({"task": "t", "resultSchema": "a list of files"}),
            Err("`resultSchema`: expected a schema object, got a string")),
        call("delegated child calling delegate is refused", "delegate", json!({"task": "t"}), Err("cannot delegate in turn"))
            .run(delegated),
        call("script calling delegate is refused", "delegate", json!({"task": "t"}), Err("do not delegate"))
            .run(Some(RunKind::Script)),
        call("return_result is no session verb", "return_result", json!({"value": 1}), Err("no tool named `return_result`")),
    ]
}

/// Runs a case; the text is what the model would read, then the action.
async fn run(fixture: &Fixture, case: &Case) -> (bool, String) {
    let run = RunContext {
        session_id: case.session,
        agent_id: seri_core::AgentId::local(),
        strategy: case.strategy,
        run: case.run.map(|kind| RunRef { id: RUN, kind, parked_children: case.parked }),
    };
    let registry = ToolRegistry::with_session_verbs();
    let (tool, input) = match &case.action {
        Action::List => {
            let names: Vec<String> = registry.available(&run).into_iter().map(|s| s.name).collect();
            return (true, format!("available: {}", names.join(", ")));
        }
        Action::Call(tool, input) => (*tool, input.clone()),
    };
    let ctx = ToolContext {
        run: &run,
        access: &fixture.sessions,
        workspace: &fixture.workspace,
        permissions: &fixture.permissions,
        call: None,
    };
    match registry.call(ctx, tool, input).await {
        Result::Ok(outcome) => {
            let mut text = format!("ok: {}", outcome.text);
            match outcome.action {
                ToolAction::None => {}
                ToolAction::Append(events) => {
                    for event in events {
                        let _ = write!(text, "\nappend {}: {}", event.kind(), event.to_payload());
                    }
                }
                ToolAction::Continue(request) => text.push_str(&render_request(&request)),
                ToolAction::Delegate(request) => text.push_str(&render_delegation(&request)),
                ToolAction::Return(value) => {
                    let _ = write!(text, "\nreturn: {value}");
                }
            }
            (true, text)
        }
        Result::Err(error) => (false, format!("error: {error}")),
    }
}

/// A continuation request, one fact per line, compact JSON for the parts
/// the model wrote.
fn render_request(r: &ContinuationRequest) -> String {
    let plan = match &r.carried_plan {
        Some(p) => format!(" ({} steps, owner {:?})", p.steps.len(), p.owner_run_id),
        None => String::new(),
    };
    format!(
        "\ncontinue: reason {}, title {}, description {}\nplan: {:?}{plan}\ninitiating: seq {} ({})\nhandoff: {}\nsources: {}",
        r.reason,
        Value::from(r.title.as_str()),
        Value::from(r.description.as_str()),
        r.plan_transfer,
        r.initiating_seq,
        r.initiating_event_id,
        serde_json::to_string(&r.handoff).unwrap(),
        serde_json::to_string(&r.sources).unwrap(),
    )
}

/// A delegation request, one fact per line.
fn render_delegation(r: &DelegationRequest) -> String {
    let tools = r.tools.as_ref().map_or_else(|| "all".to_owned(), |t| serde_json::to_string(t).unwrap());
    let schema = r.result_schema.as_ref().map_or_else(|| "none".to_owned(), |s| s.as_value().to_string());
    format!(
        "\ndelegate: title {}, typed {}, tools {tools}\ntask: {}\nschema: {schema}",
        Value::from(r.title.as_str()),
        r.is_typed(),
        Value::from(r.task.as_str()),
    )
}

#[tokio::test]
async fn every_rule_of_the_table() {
    let fixture = Fixture::new();
    let mut report = String::new();
    let mut failures = Vec::new();
    for case in cases() {
        let (ok, text) = run(&fixture, &case).await;
        let (want_ok, needle, exact) = match case.expect {
            Expect::Ok(n) => (true, n, false),
            Expect::Only(n) => (true, n, true),
            Expect::Err(n) => (false, n, false),
        };
        let matches = if exact { text == needle } else { text.contains(needle) };
        if ok != want_ok || !matches {
            failures.push(format!(
                "{}: expected {} containing {needle:?}, got:\n{text}",
                case.name,
                if want_ok { "ok" } else { "an error" }
            ));
        }
        let _ = writeln!(report, "## {}\n{text}\n", case.name);
    }
    assert!(failures.is_empty(), "{} case(s) failed:\n\n{}", failures.len(), failures.join("\n\n"));
    insta::assert_snapshot!("rules_table", report);
}

#[tokio::test]
async fn another_agents_thread_reads_exactly_like_a_missing_one() {
    let fixture = Fixture::new();
    let error_for = |target: String| {
        let run = RunContext {
            session_id: CURRENT,
            agent_id: seri_core::AgentId::local(),
            strategy: ContextStrategy::Continue,
            run: Some(RunRef { id: RUN, kind: RunKind::Interactive, parked_children: 0 }),
        };
        let fixture = &fixture;
        async move {
            let ctx = ToolContext {
                run: &run,
                access: &fixture.sessions,
                workspace: &fixture.workspace,
                permissions: &fixture.permissions,
                call: None,
            };
            let result = ToolRegistry::with_session_verbs().call(ctx, "read", json!({"target": target})).await;
            result.unwrap_err().to_string()
        }
    };
    let foreign = FOREIGN.to_string();
    // A missing id of the same shape, differing only in its digits.
    let missing = foreign.replace('3', "4").replace("4444", "4445");
    let foreign_error = error_for(format!("thread:{foreign}")).await;
    let missing_error = error_for(format!("thread:{missing}")).await;
    assert_eq!(foreign_error.replace(&foreign, "<id>"), missing_error.replace(&missing, "<id>"));
}
