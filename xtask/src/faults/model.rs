//! The misbehaving model: an OpenAI-compatible `/v1/chat/completions`
//! server on 127.0.0.1 (std::net, a thread a connection) that seri is
//! pointed at through `config.json`'s `openai-compatible` provider.
//!
//! A normal answer echoes the token of the newest user message (`ack
//! FQ-…`), so the checker can pair answers with messages; the message's
//! `do:` word asks for a tool call first (`bash`, the MCP `echo`,
//! `continue_session`). A request without tools is the compaction
//! summarizer's and gets a recap. Otherwise, drawn per request: 429 with
//! `Retry-After`, 500/502/503, a stream cut mid-way, a malformed chunk, a
//! trickle of slow bytes (that does finish), an empty 200, or a hang that
//! ends by closing the connection. The draw is keyed by the schedule's seed,
//! the message's token, the step of its turn and how many times that step
//! was asked for already, so it replays whatever order requests come in;
//! and after three faults in a row the step is answered, so seri's five
//! retries always suffice: a run that fails on the provider is a finding.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

use super::prng::{Rng, derive, hash};
use super::schedule::Action;

/// A fault after which seri's provider retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProviderFault {
    RateLimited,
    ServerError(u16),
    CutStream,
    MalformedChunk,
    Trickle,
    EmptyOk,
    Hang(u64),
}

impl ProviderFault {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ProviderFault::RateLimited => "429",
            ProviderFault::ServerError(_) => "5xx",
            ProviderFault::CutStream => "cut stream",
            ProviderFault::MalformedChunk => "malformed chunk",
            ProviderFault::Trickle => "trickle",
            ProviderFault::EmptyOk => "empty 200",
            ProviderFault::Hang(_) => "hang",
        }
    }
}

/// The most faults in a row one step of a turn gets (seri retries five times).
const MAX_FAULTS_IN_A_ROW: u64 = 3;

/// What one request is, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turn {
    /// The newest user message's token.
    pub(crate) token: Option<String>,
    pub(crate) action: Action,
    /// Model answers after that message so far: 0 on its first request.
    pub(crate) step: usize,
    /// The session is a successor (its projection is in the request): a
    /// `do:continue` message there is answered, not continued again.
    pub(crate) successor: bool,
    /// No tools: the compaction summarizer asks.
    pub(crate) summary: bool,
    pub(crate) tools: Vec<String>,
    /// Characters of every message, for a plausible `prompt_tokens`.
    pub(crate) chars: usize,
}

/// The marker the model writes into a handoff, so a successor knows it is one.
pub(crate) const HANDOFF_MARK: &str = "FQ-HANDOFF";

/// Every `FQ-` and 12 lowercase hex digits in `text`, in order.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find("FQ-") {
        let start = at + offset;
        let digits = &bytes[start + 3..];
        let hex = digits.iter().take(12).take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)).count();
        let bounded = digits.get(12).is_none_or(|b| !b.is_ascii_alphanumeric());
        if hex == 12 && bounded {
            found.push(text[start..start + 15].to_owned());
            at = start + 15;
        } else {
            at = start + 3;
        }
    }
    found
}

/// `text` without its `<session_status …>…</session_status>` block, whose
/// title may quote the session's first message (and its token).
fn without_status(text: &str) -> String {
    let mut out = text.to_owned();
    while let Some(start) = out.find("<session_status") {
        let end = out[start..].find("</session_status>").map_or(out.len(), |e| start + e + "</session_status>".len());
        out.replace_range(start..end, "");
    }
    out
}

fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Reads a chat completions request.
pub(crate) fn read_turn(request: &Value) -> Turn {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let tools: Vec<String> = request["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let chars = messages.iter().map(|m| content_text(m).len()).sum::<usize>();
    let successor = messages.iter().any(|m| m["role"] == "user" && content_text(m).contains(HANDOFF_MARK));
    let mut turn =
        Turn { token: None, action: Action::Plain, step: 0, successor, summary: tools.is_empty(), tools, chars };
    for (i, message) in messages.iter().enumerate().rev() {
        if message["role"] != "user" {
            continue;
        }
        let text = without_status(&content_text(message));
        let Some(token) = tokens(&text).pop() else { continue };
        turn.token = Some(token);
        turn.action = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("do:"))
            .and_then(Action::from_word)
            .unwrap_or(Action::Plain);
        turn.step = messages[i + 1..].iter().filter(|m| m["role"] == "assistant").count();
        break;
    }
    turn
}

/// The key a step's faults are counted and drawn by.
pub(crate) fn step_key(turn: &Turn) -> String {
    if turn.summary {
        format!("summary/{}", turn.chars / 64)
    } else {
        format!("{}/{}", turn.token.as_deref().unwrap_or("none"), turn.step)
    }
}

/// How long the model thinks before its first byte: up to 1.2 s, so runs
/// last long enough for kills and outages to land inside them.
pub(crate) fn think_ms(seed: u64, key: &str, attempt: u64, probe: bool) -> u64 {
    if probe { 0 } else { derive(seed ^ hash(key), 1_000 + attempt) % 1_200 }
}

/// The fault (if any) for the `attempt`-th request of a step.
pub(crate) fn draw_fault(seed: u64, percent: u64, key: &str, attempt: u64, probe: bool) -> Option<ProviderFault> {
    if probe || attempt >= MAX_FAULTS_IN_A_ROW {
        return None;
    }
    let mut rng = Rng::new(derive(seed ^ hash(key), attempt));
    if !rng.chance(percent) {
        return None;
    }
    Some(match rng.weighted(&[3, 3, 2, 2, 1, 1, 1]) {
        0 => ProviderFault::RateLimited,
        1 => ProviderFault::ServerError([500, 502, 503][rng.below(3) as usize]),
        2 => ProviderFault::CutStream,
        3 => ProviderFault::MalformedChunk,
        4 => ProviderFault::Trickle,
        5 => ProviderFault::EmptyOk,
        _ => ProviderFault::Hang(rng.between(1_000, 6_000)),
    })
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "fq", "object": "chat.completion.chunk", "created": 0, "model": "fq-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn usage(turn: &Turn, output: usize) -> Value {
    let prompt = turn.chars / 4 + 1;
    json!({"id": "fq", "object": "chat.completion.chunk", "created": 0, "model": "fq-model", "choices": [],
           "usage": {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output}})
}

fn text_events(turn: &Turn, text: &str) -> Vec<Value> {
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    // Three pieces, so a cut stream can stop between them.
    let third = text.len() / 3;
    let cuts = [0, text.floor_char_boundary(third), text.floor_char_boundary(2 * third), text.len()];
    for w in cuts.windows(2) {
        events.push(chunk(json!({"content": &text[w[0]..w[1]]}), None));
    }
    events.push(chunk(json!({}), Some("stop")));
    events.push(usage(turn, text.len() / 4 + 1));
    events
}

fn call_events(turn: &Turn, id: &str, name: &str, arguments: &Value) -> Vec<Value> {
    let arguments = arguments.to_string();
    let half = arguments.floor_char_boundary(arguments.len() / 2);
    let call = |fields: Value| json!({"tool_calls": [fields]});
    vec![
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(
            call(json!({"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}})),
            None,
        ),
        chunk(call(json!({"index": 0, "function": {"arguments": &arguments[..half]}})), None),
        chunk(call(json!({"index": 0, "function": {"arguments": &arguments[half..]}})), None),
        chunk(json!({}), Some("tool_calls")),
        usage(turn, 20),
    ]
}

const RECAP: &str = "## Goal\nAnswer each message of the fault suite.\n\n## Progress\nEarlier messages were answered.\n\n\
                     ## Blockers\nNone.\n\n## Next steps\nAnswer the newest message.\n";

/// The answer to `turn` when nothing goes wrong; `call_id` names a tool
/// call uniquely. `filler` pads answers (compaction needs a full window).
pub(crate) fn answer(turn: &Turn, call_id: &str, filler: usize) -> Vec<Value> {
    if turn.summary {
        return text_events(turn, RECAP);
    }
    let Some(token) = &turn.token else {
        return text_events(turn, "There is no fault-suite token in this conversation.");
    };
    let has = |name: &str| turn.tools.iter().any(|t| t == name);
    if turn.step == 0 {
        match turn.action {
            Action::Bash if has("bash") => {
                return call_events(turn, call_id, "bash", &json!({"command": format!("echo {token}-tool")}));
            }
            Action::SlowBash if has("bash") => {
                let command = format!("sleep 2; echo {token}-tool");
                return call_events(turn, call_id, "bash", &json!({"command": command}));
            }
            Action::Mcp if has("mcp__fq__echo") => {
                return call_events(turn, call_id, "mcp__fq__echo", &json!({"text": format!("{token}-tool")}));
            }
            Action::Continue if has("continue_session") && !turn.successor => {
                let arguments = json!({
                    "reason": "topic_change",
                    "title": "Fault suite successor",
                    "description": "Carries on the fault suite's conversation.",
                    "handoff": {
                        "purpose": format!("{HANDOFF_MARK}: answer the person's message in this successor."),
                        "currentRequest": "Answer the copied message.",
                    },
                });
                return call_events(turn, call_id, "continue_session", &arguments);
            }
            _ => {}
        }
    }
    let pad = "lorem ipsum ".repeat(filler / 12);
    text_events(turn, format!("ack {token} {pad}").trim_end())
}

/// What the model server saw, for the summary.
#[derive(Debug, Default, Clone)]
pub(crate) struct ModelStats {
    pub(crate) requests: u64,
    pub(crate) faults: HashMap<&'static str, u64>,
}

/// The running server; stopped when dropped.
pub(crate) struct ModelServer {
    pub(crate) base_url: String,
    stop: Arc<AtomicBool>,
    port: u16,
    stats: Arc<Mutex<ModelStats>>,
}

struct Shared {
    seed: u64,
    percent: u64,
    filler: usize,
    attempts: Mutex<HashMap<String, u64>>,
    calls: AtomicU64,
    stats: Arc<Mutex<ModelStats>>,
    stop: Arc<AtomicBool>,
}

impl ModelServer {
    pub(crate) fn start(seed: u64, percent: u64, filler: usize) -> Result<ModelServer, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("the model server cannot listen: {e}"))?;
        let port = listener.local_addr().map_err(|e| format!("the model server has no address: {e}"))?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(ModelStats::default()));
        let shared = Arc::new(Shared {
            seed,
            percent,
            filler,
            attempts: Mutex::new(HashMap::new()),
            calls: AtomicU64::new(0),
            stats: stats.clone(),
            stop: stop.clone(),
        });
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if shared.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let _ = serve(&shared, stream);
                });
            }
        });
        Ok(ModelServer { base_url: format!("http://127.0.0.1:{port}/v1"), stop, port, stats })
    }

    pub(crate) fn stats(&self) -> ModelStats {
        self.stats.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Reads one request: the head, then `content-length` bytes of body.
fn read_request(stream: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed in the head"));
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        head.push_str(&line);
    }
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok((head, body))
}

fn serve(shared: &Shared, mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let (head, body) = read_request(&mut stream)?;
    if !head.starts_with("POST ") || !head.contains("/chat/completions") {
        return stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let turn = read_turn(&request);
    let key = step_key(&turn);
    let attempt = {
        let mut attempts = shared.attempts.lock().unwrap_or_else(PoisonError::into_inner);
        let n = attempts.entry(key.clone()).or_insert(0);
        *n += 1;
        *n - 1
    };
    let probe = turn.action == Action::Probe;
    let fault = draw_fault(shared.seed, shared.percent, &key, attempt, probe);
    {
        let mut stats = shared.stats.lock().unwrap_or_else(PoisonError::into_inner);
        stats.requests += 1;
        if let Some(f) = fault {
            *stats.faults.entry(f.name()).or_insert(0) += 1;
        }
    }
    std::thread::sleep(Duration::from_millis(think_ms(shared.seed, &key, attempt, probe)));
    let call_id = format!("call_fq{}", shared.calls.fetch_add(1, Ordering::SeqCst));
    let events = answer(&turn, &format!("{call_id}_{}", shared.seed % 10_000), shared.filler);
    let stream_body = |events: &[Value], done: bool| {
        let mut text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        if done {
            text.push_str("data: [DONE]\n\n");
        }
        text
    };
    let sse_head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    match fault {
        None => {
            stream.write_all(sse_head.as_bytes())?;
            stream.write_all(stream_body(&events, true).as_bytes())?;
        }
        Some(ProviderFault::RateLimited) => {
            let body = r#"{"error":{"message":"rate limited by the fault suite","type":"rate_limit_error"}}"#;
            let text = format!(
                "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(text.as_bytes())?;
        }
        Some(ProviderFault::ServerError(code)) => {
            let body = r#"{"error":{"message":"the fault suite's server failed","type":"server_error"}}"#;
            let text = format!(
                "HTTP/1.1 {code} Fault\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(text.as_bytes())?;
        }
        Some(ProviderFault::CutStream) => {
            stream.write_all(sse_head.as_bytes())?;
            let half = events.len() / 2;
            let mut text = stream_body(&events[..half.max(1)], false);
            // Cut inside an event, too.
            text.push_str("data: {\"id\":\"fq\",\"choi");
            stream.write_all(text.as_bytes())?;
        }
        Some(ProviderFault::MalformedChunk) => {
            stream.write_all(sse_head.as_bytes())?;
            let mut text = stream_body(&events[..1], false);
            text.push_str("data: {\"choices\": [{\"delta\": {\"content\": \"oops\"}, }]]\n\n");
            text.push_str(&stream_body(&events[1..], true));
            stream.write_all(text.as_bytes())?;
        }
        Some(ProviderFault::Trickle) => {
            stream.write_all(sse_head.as_bytes())?;
            let text = stream_body(&events, true);
            let pieces = text.as_bytes().chunks(text.len().div_ceil(25).max(1));
            for piece in pieces {
                stream.write_all(piece)?;
                stream.flush()?;
                std::thread::sleep(Duration::from_millis(60));
            }
        }
        Some(ProviderFault::EmptyOk) => {
            stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            )?;
        }
        Some(ProviderFault::Hang(ms)) => {
            // Holds the request, then drops the connection without a word.
            std::thread::sleep(Duration::from_millis(ms));
        }
    }
    stream.flush()?;
    let _ = stream.shutdown(std::net::Shutdown::Both);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(messages: Value, tools: &[&str]) -> Value {
        let tools: Vec<Value> = tools.iter().map(|t| json!({"type": "function", "function": {"name": t}})).collect();
        json!({"messages": messages, "tools": tools})
    }

    #[test]
    fn tokens_are_found_whole() {
        assert_eq!(tokens("a FQ-0123456789ab b FQ-fedcba987654."), ["FQ-0123456789ab", "FQ-fedcba987654"]);
        assert!(tokens("FQ-0123456789abc FQ-0123 FQ-0123456789AB").is_empty());
        assert_eq!(tokens("xFQ-0123456789ab-tool"), ["FQ-0123456789ab"]);
    }

    #[test]
    fn the_newest_user_message_decides_and_the_status_block_is_ignored() {
        let turn = read_turn(&request(
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "FQ-aaaaaaaaaaaa do:bash please"},
                {"role": "assistant", "content": "ack FQ-aaaaaaaaaaaa"},
                {"role": "user", "content": "FQ-bbbbbbbbbbbb do:bash please"},
                {"role": "user", "content": "<session_status title=\"FQ-aaaaaaaaaaaa do:bash\">x</session_status>"},
            ]),
            &["bash"],
        ));
        assert_eq!(turn.token.as_deref(), Some("FQ-bbbbbbbbbbbb"));
        assert_eq!((turn.action, turn.step, turn.summary, turn.successor), (Action::Bash, 0, false, false));
        let events = answer(&turn, "call_1", 0);
        assert!(events.iter().any(|e| e["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "bash"));
    }

    #[test]
    fn after_the_tool_result_the_token_is_acknowledged() {
        let turn = read_turn(&request(
            json!([
                {"role": "user", "content": "FQ-cccccccccccc do:mcp please"},
                {"role": "assistant", "content": null, "tool_calls": []},
                {"role": "tool", "tool_call_id": "c", "content": "FQ-cccccccccccc-tool"},
            ]),
            &["mcp__fq__echo"],
        ));
        assert_eq!((turn.action, turn.step), (Action::Mcp, 1));
        let text: String =
            answer(&turn, "c2", 30).iter().filter_map(|e| e["choices"][0]["delta"]["content"].as_str()).collect();
        assert!(text.starts_with("ack FQ-cccccccccccc lorem ipsum"), "{text}");
    }

    #[test]
    fn a_successor_answers_instead_of_continuing_and_missing_tools_fall_back() {
        let successor = read_turn(&request(
            json!([
                {"role": "user", "content": format!("projection: {HANDOFF_MARK} …")},
                {"role": "user", "content": "FQ-dddddddddddd do:continue please"},
            ]),
            &["continue_session"],
        ));
        assert!(successor.successor);
        let says = |events: Vec<Value>| -> String {
            events.iter().filter_map(|e| e["choices"][0]["delta"]["content"].as_str()).collect()
        };
        assert_eq!(says(answer(&successor, "c", 0)), "ack FQ-dddddddddddd");
        let no_tool = read_turn(&request(json!([{"role": "user", "content": "FQ-dddddddddddd do:mcp"}]), &["bash"]));
        assert_eq!(says(answer(&no_tool, "c", 0)), "ack FQ-dddddddddddd");
        let summary = read_turn(&json!({"messages": [{"role": "user", "content": "summarise"}]}));
        assert!(summary.summary);
        assert!(says(answer(&summary, "c", 0)).contains("## Next steps"));
    }

    #[test]
    fn faults_replay_by_key_and_stop_after_three_in_a_row() {
        let draws = |seed| -> Vec<Option<ProviderFault>> {
            (0..40).map(|n| draw_fault(seed, 50, &format!("FQ-x/{n}"), 0, false)).collect()
        };
        assert_eq!(draws(1), draws(1));
        assert!(draws(1).iter().any(Option::is_some) && draws(1).iter().any(Option::is_none));
        for attempt in MAX_FAULTS_IN_A_ROW..MAX_FAULTS_IN_A_ROW + 5 {
            assert_eq!(draw_fault(1, 100, "k", attempt, false), None);
        }
        assert!(draw_fault(1, 100, "k", 0, false).is_some());
        assert_eq!(draw_fault(1, 100, "k", 0, true), None, "probes are never faulted");
        assert_eq!(draw_fault(1, 0, "k", 0, false), None);
    }
}
