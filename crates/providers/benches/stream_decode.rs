//! What reading a streamed answer costs: an OpenAI-style stream of 2,000
//! text chunks and a tool call split into 1,000 argument fragments, decoded
//! from 4 KiB network reads through the SSE decoder and the chunk reader
//! (deltas delivered to a sink, arguments assembled and validated), next to
//! the floor of that work: a typed `serde_json` parse of the same events'
//! data, already split into lines, into structs of the chunk's shape (what
//! any typed client must do). The figure is the median of 7 rounds, with the
//! fastest and slowest.
//!
//! Prints, in the form `cargo xtask bench` collects:
//! `bench: <what> | <value> <unit> | baseline <what> <value> <unit> | ratio <x.xx>`

// A benchmark reports on stdout; that is its whole output.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use seri_providers::openai::stream::ChunkReader;
use seri_providers::sse::SseDecoder;
use seri_providers::{EventSink, StreamEvent};

/// Counts events, as a consumer that does a little with each would.
struct CountingSink(std::sync::atomic::AtomicUsize);

impl EventSink for CountingSink {
    fn emit(&self, event: StreamEvent) {
        black_box(&event);
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

fn chunk(delta: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\",\"created\":1741569952,\"model\":\"gpt-4.1-2025-04-14\",\"system_fingerprint\":\"fp_b376dfbbd5\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"
    )
}

fn stream() -> String {
    let mut s = String::new();
    for n in 0..2000 {
        s.push_str(&chunk(&format!("{{\"content\":\"word {n} \"}}")));
    }
    s.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write","arguments":""}}]}"#,
    ));
    s.push_str(&chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"text\": \""}}]}"#));
    for n in 0..1000 {
        s.push_str(&chunk(&format!(r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":"line {n} \\n"}}}}]}}"#)));
    }
    s.push_str(&chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}"#));
    s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n");
    s.push_str("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9000,\"completion_tokens\":4000,\"prompt_tokens_details\":{\"cached_tokens\":8000}}}\n\n");
    s.push_str("data: [DONE]\n\n");
    s
}

fn decode(bytes: &[u8]) -> usize {
    let sink = CountingSink(0.into());
    let mut decoder = SseDecoder::new();
    let mut reader = ChunkReader::new("openai", &sink);
    for read in bytes.chunks(4096) {
        for event in decoder.push(read).unwrap_or_default() {
            if let Err(error) = reader.on_data(&event.data) {
                panic!("{error}");
            }
        }
    }
    let response = match reader.finish() {
        Ok(response) => response.tool_calls.len(),
        Err(error) => panic!("{error}"),
    };
    response + sink.0.into_inner()
}

/// A chat-completions chunk, typed the way a client reads it.
#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "decoded to be measured, then dropped")]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "decoded to be measured, then dropped")]
struct Choice {
    index: u32,
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "decoded to be measured, then dropped")]
struct Delta {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<CallDelta>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "decoded to be measured, then dropped")]
struct CallDelta {
    index: u32,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "decoded to be measured, then dropped")]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

fn baseline(lines: &[&str]) -> usize {
    lines.iter().filter_map(|line| serde_json::from_str::<Chunk>(line).ok()).count()
}

/// Seven timed rounds, each running `f` `iterations` times: the median,
/// fastest and slowest time of one run.
fn rounds(iterations: u32, mut f: impl FnMut() -> usize) -> (Duration, Duration, Duration) {
    let mut times: Vec<Duration> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                black_box(f());
            }
            start.elapsed() / iterations
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

fn main() {
    let stream = stream();
    let bytes = stream.as_bytes();
    let lines: Vec<&str> =
        stream.split("\n\n").filter_map(|e| e.strip_prefix("data: ")).filter(|d| *d != "[DONE]").collect();
    // 2,000 text deltas, the call started and ready, and the call itself.
    assert_eq!(decode(bytes), 2003, "the stream must decode completely");

    assert_eq!(baseline(&lines), lines.len(), "the typed baseline must parse every chunk");
    let (ours, lo, hi) = rounds(20, || decode(black_box(bytes)));
    let (floor, flo, fhi) = rounds(20, || baseline(black_box(&lines)));
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "bench: decode 3,000-chunk OpenAI stream, SSE + assembly (median of 7: {:.0}–{:.0} µs) | {:.0} µs | baseline typed serde_json parse of the same chunks ({:.0}–{:.0}) {:.0} µs | ratio {:.2}",
        micros(lo),
        micros(hi),
        micros(ours),
        micros(flo),
        micros(fhi),
        micros(floor),
        micros(ours) / micros(floor)
    );
}
