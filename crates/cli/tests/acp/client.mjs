// A scenario-driven ACP client on the official TypeScript SDK
// (@agentclientprotocol/sdk 2.x, app API: client().onRequest(...).connect(stream)).
//
// Usage: SERI_ACP_MODULES=<node_modules dir> \
//        node client.mjs SCENARIO_JSON_FILE -- AGENT_PROGRAM [AGENT_ARGS...]
//
// It spawns the agent (stdin/stdout piped, stderr inherited), runs the
// scenario's steps in order and prints one JSON object per line on stdout:
//   {"kind":"response","op":OP,"result":{...}}
//   {"kind":"error","op":OP,"error":{code,message,data}}   (the script goes on)
//   {"kind":"update","update":<session/update params, as received>}
//   {"kind":"permission","request":<params>,"answer":<outcome sent>}
//   {"kind":"fs","method":"fs/read_text_file"|"fs/write_text_file","params":{...}}
//   {"kind":"cancel","sessionId":...}                       (a session/cancel was sent)
//   {"kind":"skipped","op":OP,"reason":...}
//   {"kind":"sdk_error","message":...}                      (the SDK rejected something the agent sent)
//   {"kind":"exit","code":N,"signal":S} then {"kind":"done"}, exit status 0
//   {"kind":"crash","message":...}                          (unexpected exception), exit status 1
//
// Scenario file: {"clientCapabilities"?, "permissions"?: [kind | "cancelled", ...], "steps": [...]}
// Steps: initialize, new, load, resume, list, fork, prompt, await, set_mode, set_config, sleep, close.
// Any step may carry "sessionId" (instead of the current session) and
// "params" (extra fields merged into the request).

import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function errorObject(err) {
  return { code: err.code, message: err.message, data: err.data };
}

function isRpcError(err) {
  return err && typeof err === "object" && typeof err.code === "number";
}

const argv = process.argv.slice(2);
const dashes = argv.indexOf("--");
if (argv.length < 3 || dashes !== 1) {
  process.stderr.write(
    "usage: node client.mjs SCENARIO_JSON_FILE -- AGENT_PROGRAM [AGENT_ARGS...]\n",
  );
  process.exit(2);
}
const scenarioPath = argv[0];
const [program, ...programArgs] = argv.slice(2);

const modules = process.env.SERI_ACP_MODULES;
if (!modules) {
  process.stderr.write("SERI_ACP_MODULES must name a node_modules directory\n");
  process.exit(2);
}

let child;
let childExit; // Promise<{code, signal}>

async function stopAgent() {
  if (!child) return null;
  try {
    child.stdin.end();
  } catch {}
  const timeout = new Promise((r) => setTimeout(() => r(null), 5000));
  let status = await Promise.race([childExit, timeout]);
  if (status === null) {
    child.kill("SIGKILL");
    status = await Promise.race([
      childExit,
      new Promise((r) => setTimeout(() => r({ code: null, signal: "SIGKILL" }), 2000)),
    ]);
  }
  return status;
}

async function crash(err) {
  emit({ kind: "crash", message: String(err && err.stack ? err.stack : err) });
  try {
    const status = await stopAgent();
    if (status) emit({ kind: "exit", code: status.code, signal: status.signal });
  } catch {}
  process.exit(1);
}

process.on("uncaughtException", crash);
process.on("unhandledRejection", crash);

try {
  await main();
} catch (err) {
  await crash(err);
}

async function main() {
  const scenario = JSON.parse(await readFile(scenarioPath, "utf8"));
  const clientCapabilities = scenario.clientCapabilities ?? {
    fs: { readTextFile: false, writeTextFile: false },
    terminal: false,
  };
  const permissionAnswers = [...(scenario.permissions ?? [])];

  // Resolve the SDK from SERI_ACP_MODULES through its own exports map.
  // The /unstable entry is the stable v1 app API plus unstable methods
  // (session/fork); it is the same wire protocol.
  const require = createRequire(join(resolve(modules), "noop.js"));
  const acp = await import(
    pathToFileURL(require.resolve("@agentclientprotocol/sdk/unstable")).href
  );
  const { client, methods, ndJsonStream } = acp;

  // The SDK logs what it rejects (an invalid notification, a response to an
  // unknown request) with console.error; make that visible on stdout too.
  const origError = console.error;
  console.error = (...args) => {
    emit({
      kind: "sdk_error",
      message: args
        .map((a) => (typeof a === "string" ? a : JSON.stringify(a)))
        .join(" "),
    });
    origError(...args);
  };

  child = spawn(program, programArgs, { stdio: ["pipe", "pipe", "inherit"] });
  childExit = new Promise((res) => {
    child.on("exit", (code, signal) => res({ code, signal }));
  });
  try {
    await new Promise((res, rej) => {
      child.once("spawn", res);
      child.once("error", rej);
    });
  } catch (err) {
    child = undefined; // never started: nothing to stop
    throw err;
  }
  child.stdin.on("error", () => {}); // EPIPE when the agent has gone

  const raw = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

  // Per-prompt watchers of agent_message_chunk updates (cancelAfterChunks).
  const chunkWatchers = new Set();

  // Tap every incoming message: session/update params are printed exactly as
  // received, before the SDK parses them (its parser is lenient and drops or
  // defaults invalid fields).
  const readable = raw.readable.pipeThrough(
    new TransformStream({
      transform(msg, controller) {
        if (
          msg &&
          typeof msg === "object" &&
          msg.method === "session/update" &&
          !("id" in msg)
        ) {
          emit({ kind: "update", update: msg.params });
          const update = msg.params && msg.params.update;
          if (update && update.sessionUpdate === "agent_message_chunk") {
            for (const w of [...chunkWatchers]) w(msg.params.sessionId);
          }
        }
        controller.enqueue(msg);
      },
    }),
  );
  const stream = { readable, writable: raw.writable };

  const app = client({ name: "seri-test-client" })
    .onNotification(methods.client.session.update, () => {})
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const want = permissionAnswers.length > 0 ? permissionAnswers.shift() : "allow_once";
      let answer;
      let note;
      if (want === "cancelled") {
        answer = { outcome: "cancelled" };
      } else {
        const option = (params.options ?? []).find((o) => o.kind === want);
        if (option) {
          answer = { outcome: "selected", optionId: option.optionId };
        } else {
          answer = { outcome: "cancelled" };
          note = `no option of kind ${want}`;
        }
      }
      emit({ kind: "permission", request: params, answer, ...(note ? { note } : {}) });
      return { outcome: answer };
    })
    .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
      emit({ kind: "fs", method: "fs/read_text_file", params });
      if (!clientCapabilities.fs?.readTextFile) {
        throw acp.RequestError.methodNotFound("fs/read_text_file");
      }
      if (!isAbsolute(params.path)) {
        throw acp.RequestError.invalidParams(undefined, "path must be absolute");
      }
      let content;
      try {
        content = await readFile(params.path, "utf8");
      } catch {
        throw acp.RequestError.resourceNotFound(params.path);
      }
      if (params.line != null || params.limit != null) {
        const lines = content.split("\n");
        const start = Math.max((params.line ?? 1) - 1, 0);
        const end = params.limit != null ? start + params.limit : lines.length;
        content = lines.slice(start, end).join("\n");
      }
      return { content };
    })
    .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
      emit({ kind: "fs", method: "fs/write_text_file", params });
      if (!clientCapabilities.fs?.writeTextFile) {
        throw acp.RequestError.methodNotFound("fs/write_text_file");
      }
      if (!isAbsolute(params.path)) {
        throw acp.RequestError.invalidParams(undefined, "path must be absolute");
      }
      await mkdir(dirname(params.path), { recursive: true });
      await writeFile(params.path, params.content, "utf8");
      return {};
    });

  const connection = app.connect(stream);
  const agent = connection.agent;

  let current; // the current session id
  let agentCapabilities = {};
  const pending = new Set();

  // Runs one request; prints its response or its JSON-RPC error.
  async function call(op, method, params) {
    try {
      const result = await agent.request(method, params);
      emit({ kind: "response", op, result: result ?? null });
      return { ok: true, result };
    } catch (err) {
      if (!isRpcError(err)) throw err;
      emit({ kind: "error", op, error: errorObject(err) });
      return { ok: false, error: err };
    }
  }

  async function cancel(sessionId) {
    emit({ kind: "cancel", sessionId });
    await agent.notify(methods.agent.session.cancel, { sessionId });
  }

  function promptBlocks(step) {
    if (step.content) return step.content;
    const blocks = [];
    if (step.text != null) blocks.push({ type: "text", text: step.text });
    for (const r of step.resources ?? []) {
      const resource = { uri: r.uri };
      if (r.blob != null) resource.blob = r.blob;
      else resource.text = r.text ?? "";
      if (r.mimeType) resource.mimeType = r.mimeType;
      blocks.push({ type: "resource", resource });
    }
    for (const l of step.links ?? []) {
      blocks.push({ type: "resource_link", ...l, uri: l.uri, name: l.name ?? l.uri });
    }
    return blocks;
  }

  async function runPrompt(step) {
    const sessionId = step.sessionId ?? current;
    const timers = [];
    let watcher;
    if (step.cancelAfterMs != null) {
      timers.push(
        setTimeout(() => {
          cancel(sessionId).catch(crash);
        }, step.cancelAfterMs),
      );
    }
    if (step.cancelAfterChunks != null) {
      let seen = 0;
      watcher = (sid) => {
        if (sid !== sessionId) return;
        seen += 1;
        if (seen === step.cancelAfterChunks) {
          chunkWatchers.delete(watcher);
          cancel(sessionId).catch(crash);
        }
      };
      chunkWatchers.add(watcher);
    }
    try {
      return await call("prompt", methods.agent.session.prompt, {
        sessionId,
        prompt: promptBlocks(step),
        ...(step.params ?? {}),
      });
    } finally {
      for (const t of timers) clearTimeout(t);
      if (watcher) chunkWatchers.delete(watcher);
    }
  }

  for (const step of scenario.steps ?? []) {
    const extra = step.params ?? {};
    switch (step.op) {
      case "initialize": {
        const r = await call("initialize", methods.agent.initialize, {
          protocolVersion: step.protocolVersion ?? 1,
          clientCapabilities,
          clientInfo: { name: "seri-test-client", version: "0.0.0" },
          ...extra,
        });
        if (r.ok) agentCapabilities = r.result.agentCapabilities ?? {};
        break;
      }
      case "new": {
        const r = await call("new", methods.agent.session.new, {
          cwd: step.cwd,
          mcpServers: step.mcpServers ?? [],
          ...extra,
        });
        if (r.ok) current = r.result.sessionId;
        break;
      }
      case "load": {
        const sessionId = step.sessionId ?? current;
        const r = await call("load", methods.agent.session.load, {
          sessionId,
          cwd: step.cwd,
          mcpServers: step.mcpServers ?? [],
          ...extra,
        });
        if (r.ok) current = sessionId;
        break;
      }
      case "resume": {
        const sessionId = step.sessionId ?? current;
        const r = await call("resume", methods.agent.session.resume, {
          sessionId,
          cwd: step.cwd,
          ...(step.mcpServers ? { mcpServers: step.mcpServers } : {}),
          ...extra,
        });
        if (r.ok) current = sessionId;
        break;
      }
      case "list": {
        const params = { ...extra };
        if (step.cwd != null) params.cwd = step.cwd;
        if (step.cursor != null) params.cursor = step.cursor;
        await call("list", methods.agent.session.list, params);
        break;
      }
      case "fork": {
        const r = await call("fork", methods.agent.session.fork, {
          sessionId: step.sessionId ?? current,
          cwd: step.cwd,
          ...(step.mcpServers ? { mcpServers: step.mcpServers } : {}),
          ...extra,
        });
        if (r.ok) current = r.result.sessionId;
        break;
      }
      case "prompt": {
        if (step.wait === false) {
          const p = runPrompt(step).catch(crash);
          pending.add(p);
          p.finally(() => pending.delete(p));
        } else {
          await runPrompt(step);
        }
        break;
      }
      case "await": {
        while (pending.size > 0) await Promise.all([...pending]);
        break;
      }
      case "cancel": {
        await cancel(step.sessionId ?? current);
        break;
      }
      case "set_mode": {
        await call("set_mode", methods.agent.session.setMode, {
          sessionId: step.sessionId ?? current,
          modeId: step.modeId,
          ...extra,
        });
        break;
      }
      case "set_config": {
        await call("set_config", methods.agent.session.setConfigOption, {
          sessionId: step.sessionId ?? current,
          configId: step.configId,
          value: step.value,
          ...extra,
        });
        break;
      }
      case "sleep": {
        await new Promise((r) => setTimeout(r, step.ms ?? 0));
        break;
      }
      case "close": {
        if (!agentCapabilities.sessionCapabilities?.close && !step.force) {
          emit({ kind: "skipped", op: "close", reason: "sessionCapabilities.close not offered" });
          break;
        }
        await call("close", methods.agent.session.close, {
          sessionId: step.sessionId ?? current,
          ...extra,
        });
        break;
      }
      default:
        throw new Error(`unknown step op: ${JSON.stringify(step.op)}`);
    }
  }
  while (pending.size > 0) await Promise.all([...pending]);

  connection.close();
  const status = await stopAgent();
  emit({ kind: "exit", code: status.code, signal: status.signal });
  emit({ kind: "done" });
  process.exit(0);
}
