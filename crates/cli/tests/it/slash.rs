//! Slash commands a person adds and the new built-ins, through a real
//! pseudo-terminal: a project command with `$ARGUMENTS` and a user command
//! listed in `/help` and sent as the message, `/config`, `/memory`, and
//! `/export` writing the transcript as markdown.

use rexpect::session::spawn_command;
use serde_json::json;

use crate::support::{Env, path_str, text};

#[test]
fn custom_commands_expand_and_the_transcript_exports_as_markdown() {
    let env = Env::new();
    let project = env.work().join(".seri").join("commands");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("review.md"),
        "---\ndescription: Review a file for bugs\n---\nReview $ARGUMENTS for bugs.\n",
    )
    .unwrap();
    let user = env.home().join("commands");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("standup.md"), "Summarise what changed today.\n").unwrap();
    std::fs::write(env.home().join("memory.md"), "").unwrap();
    std::fs::write(env.work().join("AGENTS.md"), "Be brief.\n").unwrap();
    let script = env.script("s.json", json!([text("No bugs in src/lib.rs."), text("Nothing changed.")]));
    let mut command = env.seri_on_terminal();
    command
        .args(["--script", path_str(&script)])
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .env("SERI_REQUEST_LOG", env.request_log());
    let mut p = spawn_command(command, Some(30_000)).unwrap();
    p.exp_string("/help for commands").unwrap();
    p.send_line("/help").unwrap();
    p.exp_string("/export [FILE]").unwrap();
    p.exp_string("/review            Review a file for bugs (project)").unwrap();
    p.exp_string("/standup           Summarise what changed today. (user)").unwrap();
    p.send_line("/review src/lib.rs").unwrap();
    p.exp_string("No bugs in src/lib.rs.").unwrap();
    p.send_line("/standup").unwrap();
    p.exp_string("Nothing changed.").unwrap();
    p.send_line("/memory").unwrap();
    p.exp_string("instructions  AGENTS.md (10 bytes)").unwrap();
    p.send_line("/config").unwrap();
    p.exp_string("permission mode: default").unwrap();
    p.send_line("/export chat.md").unwrap();
    p.exp_string("Wrote the transcript to").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();

    let requests = env.requests();
    assert!(requests[0]["messages"].to_string().contains("Review src/lib.rs for bugs."), "{}", requests[0]);
    let exported = std::fs::read_to_string(env.work().join("chat.md")).unwrap();
    assert!(exported.contains("## You\n\nReview src/lib.rs for bugs."), "{exported}");
    assert!(exported.contains("## seri\n\nNo bugs in src/lib.rs."), "{exported}");
    assert!(exported.contains("## You\n\nSummarise what changed today."), "{exported}");
}
