#!/usr/bin/env python3
"""Records the session fixtures of `seri import`, written by the peers themselves.

`cargo xtask peers` runs this. For each peer (Claude Code, Codex, pi,
opencode) it installs the latest release from npm into a folder outside the
checkout, runs a short session against `mock_model.py` on 127.0.0.1 with
HOME set to a fresh `/tmp/seri-peer-home` (so every path the peer writes is
the same from one recording to the next), and copies the session files the
peer wrote into `crates/import/tests/fixtures/peers/<peer>-<version>/`, under
the same relative path they have below HOME. Each session has a user
message, a tool call and its result, a final answer, then a compaction and
a branch or fork where the peer can make one; `RECORDED.md` in each folder
says the version and every command run.

Nothing here edits what a peer wrote: files are copied byte for byte. It
needs the network (npm) and is not run by CI.

Usage: record.py [--peers claude-code,codex,pi,opencode] [--install DIR]
"""

import argparse
import glob
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "crates" / "import" / "tests" / "fixtures" / "peers"
HOME = Path("/tmp/seri-peer-home")
PROJECT = HOME / "project"
PACKAGES = {
    "claude-code": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "pi": "@mariozechner/pi-coding-agent",
    "opencode": "opencode-ai",
}
HELLO = "Run `echo hello` and tell me what it printed."
FORKED = "Run `echo forked` and tell me what it printed."


class Recording:
    """One peer's run: the commands, as RECORDED.md lists them."""

    def __init__(self, peer, install, port):
        self.peer = peer
        self.install = install
        self.port = port
        self.commands = []
        self.notes = []

    def bin(self, name):
        return str(self.install / "node_modules" / ".bin" / name)

    def env(self, **extra):
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(HOME),
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "TERM": "dumb",
            "NO_COLOR": "1",
        }
        env.update(extra)
        return env

    def run(self, argv, env, shown=None, timeout=300):
        """Runs one command in the project folder; its output goes to the log."""
        shown = shown or argv
        self.commands.append(" ".join(quote(a) for a in shown))
        print(f"[{self.peer}] $ {self.commands[-1]}", flush=True)
        done = subprocess.run(argv, cwd=PROJECT, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        with open(self.install / "record.log", "a", encoding="utf-8") as log:
            log.write(f"$ {self.commands[-1]}\n{done.stdout}\n{done.stderr}\nexit {done.returncode}\n")
        if done.returncode != 0:
            raise RuntimeError(f"{self.peer}: {argv[0]} exited {done.returncode}: {done.stderr[-2000:]}")
        return done.stdout


def quote(arg):
    if arg and all(c.isalnum() or c in "-_./=:@,+" for c in arg):
        return arg
    return "'" + arg.replace("'", "'\\''") + "'"


def version_of(install, package):
    manifest = install / "node_modules" / package / "package.json"
    return json.loads(manifest.read_text())["version"]


def install(peer, root):
    folder = root / peer
    folder.mkdir(parents=True, exist_ok=True)
    print(f"[{peer}] npm install {PACKAGES[peer]}", flush=True)
    subprocess.run(["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", f"{PACKAGES[peer]}@latest"],
                   check=True, stdout=subprocess.DEVNULL)
    return folder


def fresh_home():
    shutil.rmtree(HOME, ignore_errors=True)
    PROJECT.mkdir(parents=True)
    (PROJECT / "notes.txt").write_text("hello from a file\n")


# --- Claude Code ---------------------------------------------------------------

# A session id of our choosing, so the file's name is the same every time.
CLAUDE_SESSION = "5e551011-0000-4000-8000-000000000001"


def record_claude_code(rec):
    env = rec.env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{rec.port}", ANTHROPIC_API_KEY="dummy",
                  DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    claude = rec.bin("claude")
    common = ["--model", "claude-sonnet-4-5", "--output-format", "json"]
    rec.run([claude, "-p", HELLO, "--session-id", CLAUDE_SESSION, "--allowedTools", "Bash(echo:*)", *common], env)
    rec.run([claude, "-p", "Now say goodbye.", "--resume", CLAUDE_SESSION, *common], env)
    # A branch in the same file: resumed at the first answer, the new prompt
    # becomes a second child of that answer.
    answer = claude_line(lambda line: line.get("type") == "assistant" and "The tool returned" in json.dumps(line))
    rec.run([claude, "-p", "Say goodbye in French instead.", "--resume", CLAUDE_SESSION,
             "--resume-session-at", answer, *common], env,
            shown=["claude", "-p", "Say goodbye in French instead.", "--resume", CLAUDE_SESSION,
                   "--resume-session-at", "<uuid of the first answer>", *common])
    rec.run([claude, "-p", "/compact", "--resume", CLAUDE_SESSION, *common], env)
    rec.run([claude, "-p", "Now say bye once more.", "--resume", CLAUDE_SESSION, *common], env)
    rec.run([claude, "-p", FORKED, "--resume", CLAUDE_SESSION, "--fork-session", "--allowedTools", "Bash(echo:*)",
             *common], env)
    rec.commands = [c.replace(claude, "claude") for c in rec.commands]
    return [".claude/projects/*/*.jsonl"]


def claude_line(matches):
    path = next(iter(glob.glob(str(HOME / ".claude/projects/*" / f"{CLAUDE_SESSION}.jsonl"))))
    for raw in open(path, encoding="utf-8"):
        line = json.loads(raw)
        if matches(line):
            return line["uuid"]
    raise RuntimeError("claude-code: no line to branch from")


# --- Codex -----------------------------------------------------------------------


def record_codex(rec):
    (HOME / ".codex").mkdir(parents=True)
    (HOME / ".codex" / "config.toml").write_text(
        'model = "mock-model"\n'
        'model_provider = "mock"\n\n'
        "[model_providers.mock]\n"
        'name = "Mock"\n'
        f'base_url = "http://127.0.0.1:{rec.port}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "MOCK_API_KEY"\n'
    )
    rec.notes.append("`~/.codex/config.toml`: a provider `mock` with `base_url` on the mock and `wire_api = \"responses\"`.")
    env = rec.env(MOCK_API_KEY="dummy")
    codex = rec.bin("codex")
    exec_ = [codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    rec.run([*exec_, HELLO], env)
    rollout = sorted(glob.glob(str(HOME / ".codex/sessions/*/*/*/rollout-*.jsonl")))[0]
    session = json.loads(open(rollout, encoding="utf-8").readline())["payload"]["id"]
    # `/compact` is not a command `codex exec` takes; a limit below what the
    # first turn reported makes the resumed turn compact first.
    rec.run([*exec_, "-c", "model_auto_compact_token_limit=100", "resume", session, "Now say goodbye."], env)
    rec.run([*exec_, "fork", session, FORKED], env)
    rec.commands = [c.replace(codex, "codex").replace(session, "<session id>") for c in rec.commands]
    return [".codex/sessions/*/*/*/rollout-*.jsonl"]


# --- pi ----------------------------------------------------------------------------


def record_pi(rec):
    agent = HOME / ".pi" / "agent"
    agent.mkdir(parents=True)
    models = {"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{rec.port}/v1", "api": "openai-completions", "apiKey": "dummy",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "reasoning": True, "contextWindow": 200000, "maxTokens": 8192}]}}}
    (agent / "models.json").write_text(json.dumps(models, indent=2))
    # Keep almost nothing, so the compaction cuts after the first turns.
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    rec.notes.append("`~/.pi/agent/models.json`: a provider `mock`, `api: openai-completions`, on the mock; "
                     "`~/.pi/agent/settings.json`: `compaction.keepRecentTokens: 1`.")
    env = rec.env()
    # pi's command line cannot branch in a file or compact: its SDK can.
    out = rec.run(["node", str(HERE / "pi_session.mjs"), str(rec.install)], env,
                  shown=["node", "xtask/peers/pi_session.mjs", "<pi install folder>"])
    session = out.strip().splitlines()[-1]
    pi = rec.bin("pi")
    rec.run([pi, "--provider", "mock", "--model", "mock-model", "--fork", session, "-p", FORKED], env,
            shown=["pi", "--provider", "mock", "--model", "mock-model", "--fork", "<the session file>", "-p", FORKED])
    rec.notes.append("`xtask/peers/pi_session.mjs` (pi's SDK): a prompt with a tool call, a second prompt, "
                     "`navigateTree` back to the first answer with a branch summary, a prompt on that branch, "
                     "a prompt that reads a file, `compact()`, and a last prompt.")
    return [".pi/agent/sessions/*/*.jsonl"]


# --- opencode ------------------------------------------------------------------------


def record_opencode(rec):
    config = HOME / ".config" / "opencode"
    config.mkdir(parents=True)
    settings = {
        "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                              "options": {"baseURL": f"http://127.0.0.1:{rec.port}/v1", "apiKey": "dummy"},
                              "models": {"mock-model": {"name": "Mock model", "tool_call": True, "reasoning": True}}}},
        "model": "mock/mock-model", "small_model": "mock/mock-model",
    }
    (config / "opencode.json").write_text(json.dumps(settings, indent=2))
    rec.notes.append("`~/.config/opencode/opencode.json`: a provider `mock` (`@ai-sdk/openai-compatible`) on the mock.")
    env = rec.env()
    opencode = rec.bin("opencode")
    rec.run([opencode, "run", HELLO], env)
    session = opencode_sessions()[0]
    # `opencode run` cannot compact: its server's summarize route can.
    port = free_port()
    server = subprocess.Popen([opencode, "serve", "--port", str(port)], cwd=PROJECT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/doc")
        post(rec, port, f"/session/{session}/summarize", {"providerID": "mock", "modelID": "mock-model"})
        post(rec, port, f"/session/{session}/message", {"parts": [{"type": "text", "text": "Now say goodbye."}]})
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    rec.run([opencode, "run", "--session", session, "--fork", FORKED], env)
    # Its storage is one SQLite database (`~/.local/share/opencode/opencode.db`):
    # kept, and beside it its own export of each session, so a test can hold
    # the reader of the database to the reader of the export.
    exports = HOME / "export"
    exports.mkdir()
    for each in opencode_sessions():
        out = rec.run([opencode, "export", each], env)
        (exports / f"{each}.json").write_text(out)
    # opencode has stopped: move what its write-ahead log holds into the
    # database file, so the one file is the whole database.
    with sqlite3.connect(HOME / ".local/share/opencode/opencode.db") as db:
        db.execute("pragma wal_checkpoint(truncate)")
    for leftover in glob.glob(str(HOME / ".local/share/opencode/opencode.db-*")):
        if os.path.getsize(leftover) == 0 or leftover.endswith("-shm"):
            os.remove(leftover)
    rec.notes.append("After the last command, with opencode stopped, `pragma wal_checkpoint(truncate)` moved "
                     "the write-ahead log into `opencode.db` (sqlite3), which is then copied alone.")
    rec.commands = [c.replace(opencode, "opencode").replace(session, "<session id>") for c in rec.commands]
    return ["export/*.json", ".local/share/opencode/opencode.db"]


def opencode_sessions():
    path = HOME / ".local/share/opencode/opencode.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return [row[0] for row in db.execute("select id from session order by time_created, id")]


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"nothing answered at {url}")


def post(rec, port, path, body):
    rec.commands.append(f"curl -X POST http://127.0.0.1:<port>{path} -d '{json.dumps(body)}'")
    print(f"[{rec.peer}] POST {path}", flush=True)
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
    return urllib.request.urlopen(request, timeout=120).read()


# --- Main ----------------------------------------------------------------------------

RECORDERS = {"claude-code": record_claude_code, "codex": record_codex, "pi": record_pi, "opencode": record_opencode}


def record(peer, folder, port):
    version = version_of(folder, PACKAGES[peer])
    fresh_home()
    rec = Recording(peer, folder, port)
    patterns = RECORDERS[peer](rec)
    for old in FIXTURES.glob(f"{peer}-*"):
        shutil.rmtree(old)
    target = FIXTURES / f"{peer}-{version}"
    files = sorted({Path(p) for pattern in patterns for p in glob.glob(str(HOME / pattern))})
    for path in files:
        dest = target / path.relative_to(HOME)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    lines = [
        f"# {peer} {version}",
        "",
        "Generated by `cargo xtask peers` (`xtask/peers/record.py`); do not edit. The files",
        f"beside this one are what `{PACKAGES[peer]}@{version}` wrote, byte for byte, under",
        f"HOME=`{HOME}`, run in `{PROJECT}` against `xtask/peers/mock_model.py`.",
        "",
        *[f"- {note}" for note in rec.notes],
        "",
        "Commands, in order:",
        "",
        "```sh",
        *rec.commands,
        "```",
        "",
        "Files:",
        "",
        *[f"- `{path.relative_to(HOME)}`" for path in files],
        "",
    ]
    (target / "RECORDED.md").write_text("\n".join(lines))
    print(f"[{peer}] {len(files)} files into {target.relative_to(ROOT)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", default=",".join(PACKAGES))
    parser.add_argument("--install", default="/tmp/seri-peers", help="where the peers are installed")
    parser.add_argument("--no-install", action="store_true", help="use the peers already installed there")
    args = parser.parse_args()
    root = Path(args.install)
    root.mkdir(parents=True, exist_ok=True)
    peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in peers if p not in PACKAGES]
    if unknown:
        sys.exit(f"unknown peers {unknown}: expected some of {', '.join(PACKAGES)}")
    folders = {p: (root / p if args.no_install else install(p, root)) for p in peers}
    mock = subprocess.Popen([sys.executable, str(HERE / "mock_model.py"), "--log", str(root / "mock.log")],
                            stdout=subprocess.PIPE, text=True)
    failed = []
    try:
        port = int(mock.stdout.readline().split()[-1])
        for peer in peers:
            try:
                record(peer, folders[peer], port)
            except (RuntimeError, subprocess.SubprocessError, OSError) as error:
                print(f"[{peer}] failed: {error}", file=sys.stderr, flush=True)
                failed.append(peer)
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    if failed:
        sys.exit(f"not recorded: {', '.join(failed)} (see {root}/<peer>/record.log and {root}/mock.log)")


if __name__ == "__main__":
    main()
