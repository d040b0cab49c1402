#!/usr/bin/env python3
"""A scripted model server on 127.0.0.1 for recording the peers' session files.

It speaks the three wire formats the peers use, each streamed as server-sent
events the way the real services stream them:

- Anthropic Messages (`POST …/messages`, and `…/messages/count_tokens`):
  Claude Code.
- OpenAI Responses (`POST …/responses`): Codex.
- OpenAI Chat Completions (`POST …/chat/completions`, `GET …/models`): pi
  and opencode.

Every answer follows one script, decided from the request alone, so a
recording is the same every time:

- a request to summarise the conversation (the peers' compaction prompts
  all ask for a "summary") is answered with a fixed summary;
- a request whose last message is a tool result is answered with a final
  text that quotes the result;
- a request that offers a shell tool and whose last user message asks to
  "run" something is answered with a short thought and one call of that tool,
  with the command in backticks (`echo hello` by default); one that offers a
  file-reading tool and asks to "read" a file in backticks, with a call of
  that tool;
- anything else is answered with a short text.

Usage: mock_model.py [--port N] [--log FILE]. It prints `listening on PORT`
once it accepts connections, and logs every request body to FILE (one JSON
line each) so a recording that goes wrong can be read afterwards.
"""

import argparse
import itertools
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "mock-model"
SUMMARY = (
    "Summary: the user asked to run `echo hello`; the shell printed `hello`, "
    "and the assistant reported it."
)
COUNTER = itertools.count(1)
LOCK = threading.Lock()
LOG = None

# The shell tools of the peers, most specific first.
SHELL_TOOLS = ["Bash", "bash", "shell_command", "shell", "exec_command"]
READ_TOOLS = ["Read", "read", "read_file"]


def next_id():
    with LOCK:
        return next(COUNTER)


def text_of(content):
    """The text of a message's content, whatever the wire format's shape."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                for key in ("text", "content", "output"):
                    if key in block:
                        parts.append(text_of(block[key]))
                        break
        return "\n".join(parts)
    if isinstance(content, dict):
        return text_of(content.get("text") or content.get("content"))
    return str(content)


class Turn:
    """What the script needs of a request, whatever its wire format."""

    def __init__(self, last_kind, last_text, user_text, everything, tools):
        # "user", "tool_result" or "other".
        self.last_kind = last_kind
        self.last_text = last_text
        self.user_text = user_text
        self.everything = everything
        # name -> JSON schema of its parameters
        self.tools = tools

    def decide(self):
        """("summary", text) | ("text", text) | ("call", name, arguments)."""
        if self.last_kind == "tool_result":
            # Codex puts a header before the output: the output is the last line.
            result = self.last_text.strip().splitlines()
            return ("text", f"The tool returned: {result[-1] if result else ''}")
        wants_summary = re.search(r"summar", self.user_text, re.I) or (
            self.last_kind != "user" and re.search(r"summar", self.everything[-4000:], re.I)
        )
        if wants_summary:
            return ("summary", SUMMARY)
        if self.last_kind == "user" and re.search(r"\brun\b", self.user_text, re.I):
            for name in SHELL_TOOLS:
                if name in self.tools:
                    command = re.search(r"`([^`]+)`", self.user_text)
                    command = command.group(1) if command else "echo hello"
                    return ("call", name, shell_arguments(self.tools[name], command))
        if self.last_kind == "user" and re.search(r"\bread\b", self.user_text, re.I):
            for name in READ_TOOLS:
                if name in self.tools:
                    path = re.search(r"`([^`]+)`", self.user_text)
                    return ("call", name, read_arguments(self.tools[name], path.group(1) if path else "notes.txt"))
        if re.search(r"title", self.user_text, re.I) and not self.tools:
            return ("text", "Echo hello")
        return ("text", "Goodbye!" if re.search(r"bye", self.user_text, re.I) else "OK.")


def shell_arguments(schema, command):
    """Arguments for a shell tool, shaped by its schema."""
    properties = (schema or {}).get("properties", {})
    required = (schema or {}).get("required", [])
    arguments = {}
    key = "cmd" if "cmd" in properties and "command" not in properties else "command"
    if properties.get(key, {}).get("type") == "array":
        arguments[key] = ["bash", "-lc", command]
    else:
        arguments[key] = command
    if "description" in properties or "description" in required:
        arguments["description"] = "Print hello"
    return arguments


def read_arguments(schema, path):
    """Arguments for a file-reading tool, shaped by its schema."""
    properties = (schema or {}).get("properties", {})
    key = next((k for k in ("file_path", "filePath", "path") if k in properties), "path")
    return {key: path}


# --- Anthropic Messages ------------------------------------------------------


def anthropic_turn(body):
    messages = body.get("messages", [])
    tools = {t.get("name"): t.get("input_schema", {}) for t in body.get("tools", []) or [] if t.get("name")}

    def texts(message):
        content = message.get("content")
        if isinstance(content, str):
            return [content]
        return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]

    last_kind, last_text, user_text = "other", "", ""
    if messages and messages[-1].get("role") == "user":
        last = messages[-1]
        blocks = last.get("content") if isinstance(last.get("content"), list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            last_kind, last_text = "tool_result", text_of(results[-1].get("content"))
        else:
            last_kind, last_text = "user", "\n".join(texts(last))
    for message in reversed(messages):
        if message.get("role") == "user" and texts(message):
            # Claude Code puts reminders before the prompt: the prompt is the last text.
            user_text = texts(message)[-1]
            break
    everything = json.dumps(body.get("system", "")) + json.dumps(messages)
    return Turn(last_kind, last_text, user_text, everything, tools)


def anthropic_blocks(decision):
    if decision[0] == "call":
        n = next_id()
        return [
            {"type": "thinking", "thinking": "The user asked for a tool; I will call it.", "signature": f"mock-signature-{n}"},
            {"type": "text", "text": "I'll run it."},
            {"type": "tool_use", "id": f"toolu_mock_{n:04d}", "name": decision[1], "input": decision[2]},
        ], "tool_use"
    return [{"type": "text", "text": decision[1]}], "end_turn"


def anthropic_events(body):
    blocks, stop = anthropic_blocks(anthropic_turn(body).decide())
    message_id = f"msg_mock_{next_id():04d}"
    usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    model = body.get("model", MODEL)
    start = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}}
        elif block["type"] == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": block["signature"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 20}}
    yield "message_stop", {"type": "message_stop"}


def anthropic_message(body):
    blocks, stop = anthropic_blocks(anthropic_turn(body).decide())
    return {"id": f"msg_mock_{next_id():04d}", "type": "message", "role": "assistant", "model": body.get("model", MODEL),
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20}}


# --- OpenAI Responses ----------------------------------------------------------


def responses_turn(body):
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    tools = {}
    for tool in body.get("tools", []) or []:
        if tool.get("type") == "function" and tool.get("name"):
            tools[tool["name"]] = tool.get("parameters", {})
        elif tool.get("name"):
            tools[tool["name"]] = tool.get("parameters") or tool.get("format") or {}
    last_kind, last_text, user_text = "other", "", ""
    if items:
        last = items[-1]
        if last.get("type") in ("function_call_output", "custom_tool_call_output"):
            last_kind, last_text = "tool_result", text_of(last.get("output"))
        elif last.get("role") == "user":
            last_kind, last_text = "user", text_of(last.get("content"))
    for item in reversed(items):
        if item.get("role") == "user":
            user_text = text_of(item.get("content"))
            break
    everything = json.dumps(body.get("instructions", "")) + json.dumps(items)
    return Turn(last_kind, last_text, user_text, everything, tools)


def responses_events(body, usage_tokens):
    decision = responses_turn(body).decide()
    n = next_id()
    response_id = f"resp_mock_{n:04d}"
    items = []
    if decision[0] == "call":
        items.append({"type": "reasoning", "id": f"rs_mock_{n:04d}",
                      "summary": [{"type": "summary_text", "text": "The user asked for a tool; I will call it."}],
                      "encrypted_content": None})
        items.append({"type": "function_call", "id": f"fc_mock_{n:04d}", "call_id": f"call_mock_{n:04d}",
                      "name": decision[1], "arguments": json.dumps(decision[2])})
    else:
        items.append({"type": "message", "id": f"msg_mock_{n:04d}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": decision[1], "annotations": []}]})
    created = {"id": response_id, "object": "response", "status": "in_progress", "model": body.get("model", MODEL), "output": []}
    yield "response.created", {"type": "response.created", "response": created}
    for index, item in enumerate(items):
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": {**item, "status": "in_progress"}}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield "response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0, "delta": text}
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}
    usage = {"input_tokens": usage_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": usage_tokens + 20}
    done = {**created, "status": "completed", "output": items, "usage": usage}
    yield "response.completed", {"type": "response.completed", "response": done}


# --- OpenAI Chat Completions ---------------------------------------------------


def chat_turn(body):
    messages = body.get("messages", [])
    tools = {}
    for tool in body.get("tools", []) or []:
        function = tool.get("function", {})
        if function.get("name"):
            tools[function["name"]] = function.get("parameters", {})
    last_kind, last_text, user_text = "other", "", ""
    if messages:
        last = messages[-1]
        if last.get("role") == "tool":
            last_kind, last_text = "tool_result", text_of(last.get("content"))
        elif last.get("role") == "user":
            last_kind, last_text = "user", text_of(last.get("content"))
    for message in reversed(messages):
        if message.get("role") == "user":
            user_text = text_of(message.get("content"))
            break
    return Turn(last_kind, last_text, user_text, json.dumps(messages), tools)


def chat_chunks(body):
    decision = chat_turn(body).decide()
    n = next_id()
    chunk_id = f"chatcmpl-mock-{n:04d}"
    model = body.get("model", MODEL)

    def chunk(delta, finish=None, usage=None):
        out = {"id": chunk_id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage is not None:
            out["usage"] = usage
        return out

    yield chunk({"role": "assistant", "content": ""})
    if decision[0] == "call":
        yield chunk({"reasoning_content": "The user asked for a tool; I will call it."})
        yield chunk({"content": "I'll run it."})
        call = {"index": 0, "id": f"call_mock_{n:04d}", "type": "function",
                "function": {"name": decision[1], "arguments": json.dumps(decision[2])}}
        yield chunk({"tool_calls": [call]})
        finish = "tool_calls"
    else:
        yield chunk({"content": decision[1]})
        finish = "stop"
    yield chunk({}, finish)
    yield {"id": chunk_id, "object": "chat.completion.chunk", "created": 1700000000, "model": model, "choices": [],
           "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


def chat_completion(body):
    decision = chat_turn(body).decide()
    n = next_id()
    message = {"role": "assistant", "content": None}
    finish = "stop"
    if decision[0] == "call":
        message["content"] = "I'll run it."
        message["tool_calls"] = [{"id": f"call_mock_{n:04d}", "type": "function",
                                  "function": {"name": decision[1], "arguments": json.dumps(decision[2])}}]
        finish = "tool_calls"
    else:
        message["content"] = decision[1]
    return {"id": f"chatcmpl-mock-{n:04d}", "object": "chat.completion", "created": 1700000000,
            "model": body.get("model", MODEL), "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


# --- The server -------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Codex's auto-compaction goes by the usage reported: --usage sets it.
    usage_tokens = 100

    def log_message(self, format, *args):
        pass

    def log_request_body(self, body):
        if LOG is not None:
            with LOCK:
                LOG.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")
                LOG.flush()

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events, named=True):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            if named:
                name, data = event
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            else:
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        if not named:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        self.log_request_body(None)
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 1700000000, "owned_by": "mock"}]})
        self.send_json(404, {"error": {"message": f"no {path} here", "type": "not_found"}})

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode(errors="replace")}
        self.log_request_body(body)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            return self.send_json(200, {"input_tokens": 100})
        if path.endswith("/messages"):
            if body.get("stream"):
                return self.send_events(anthropic_events(body))
            return self.send_json(200, anthropic_message(body))
        if path.endswith("/responses"):
            return self.send_events(responses_events(body, self.usage_tokens))
        if path.endswith("/chat/completions"):
            if body.get("stream"):
                return self.send_events(chat_chunks(body), named=False)
            return self.send_json(200, chat_completion(body))
        self.send_json(404, {"error": {"message": f"no {path} here", "type": "not_found"}})


def main():
    global LOG
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log")
    parser.add_argument("--usage", type=int, default=100, help="input tokens each Responses answer reports")
    args = parser.parse_args()
    if args.log:
        LOG = open(args.log, "a", encoding="utf-8")
    Handler.usage_tokens = args.usage
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
