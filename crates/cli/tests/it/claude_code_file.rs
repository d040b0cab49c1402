//! A Claude Code session file of a given size, as the import's memory
//! test and benchmark (`benches/import.rs`) read it: one session of turns
//! (a question, an answer, a tool call, a result of a few KiB) with a
//! branch left behind every 500 turns (a question asked again from the
//! turn before, as a rewind leaves it).

#![allow(clippy::unwrap_used)]

use std::io::{BufWriter, Write as _};
use std::path::Path;

/// Writes a Claude Code session of about `size` bytes to `path`; its size.
pub(crate) fn write(path: &Path, size: u64) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let session = "5e551011-0000-4000-8000-00000000beef";
    let mut written = 0u64;
    let mut parent: Option<String> = None;
    let mut earlier: Option<String> = None;
    let mut turn = 0u64;
    let line = |out: &mut BufWriter<std::fs::File>, text: String| {
        out.write_all(text.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        text.len() as u64 + 1
    };
    while written < size {
        turn += 1;
        let id = |n: u64| format!("00000000-0000-4000-8000-{:012x}", turn * 4 + n);
        let time = format!("2026-12-02T{:02}:{:02}:{:02}.000Z", (turn / 3600) % 24, (turn / 60) % 60, turn % 60);
        // Every 500th question is asked again from the turn before: the
        // first asking is a branch left behind.
        let parent_of_question = if turn.is_multiple_of(500) { earlier.clone() } else { parent.clone() };
        let parent_json = |p: &Option<String>| p.as_ref().map_or("null".to_owned(), |p| format!("\"{p}\""));
        let common = |uuid: &str, parent: &Option<String>| {
            format!(
                r#""parentUuid":{},"isSidechain":false,"uuid":"{uuid}","timestamp":"{time}","sessionId":"{session}","cwd":"/work/project","version":"2.1.197""#,
                parent_json(parent)
            )
        };
        let question = id(0);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"user",{},"message":{{"role":"user","content":"Turn {turn}: look at the parser and fix the failing case."}}}}"#,
                common(&question, &parent_of_question)
            ),
        );
        let text = id(1);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"assistant",{},"message":{{"id":"msg_{turn}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"I'll read the file first."}}]}}}}"#,
                common(&text, &Some(question.clone()))
            ),
        );
        let call = id(2);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"assistant",{},"message":{{"id":"msg_{turn}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"toolu_{turn}","name":"Read","input":{{"file_path":"/work/project/src/parser.rs"}}}}]}}}}"#,
                common(&call, &Some(text))
            ),
        );
        let result = id(3);
        let content = "fn parse(input: &str) -> Result<Ast, Error> { /* … */ }\\n".repeat(20 + (turn % 80) as usize);
        written += line(
            &mut out,
            format!(
                r#"{{"type":"user",{},"message":{{"role":"user","content":[{{"tool_use_id":"toolu_{turn}","type":"tool_result","content":"{content}","is_error":false}}]}}}}"#,
                common(&result, &Some(call))
            ),
        );
        earlier = parent.replace(result);
    }
    out.flush().unwrap();
    written
}
