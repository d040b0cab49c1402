// Drives pi through its own SDK (the package the recorder installed), so pi
// writes a session file with everything its command line cannot script: an
// in-file branch (`navigateTree`, with its branch summary) and a compaction.
// Run with the working directory as the session's cwd and HOME as the
// recording's home; argv[2] is the folder pi was installed into.
import path from "node:path";
import { pathToFileURL } from "node:url";

const entry = path.join(process.argv[2], "node_modules/@mariozechner/pi-coding-agent/dist/index.js");
const pi = await import(pathToFileURL(entry).href);
const { AuthStorage, createAgentSession, ModelRegistry, SessionManager } = pi;

const authStorage = AuthStorage.create();
const modelRegistry = ModelRegistry.create(authStorage);
const model = modelRegistry.find("mock", "mock-model");
if (!model) throw new Error("the mock provider of models.json is not loaded");
const sessionManager = SessionManager.create(process.cwd());
const { session } = await createAgentSession({ sessionManager, authStorage, modelRegistry, model });

await session.prompt("Run `echo hello` and tell me what it printed.");
const answer = sessionManager.getLeafEntry().id;
await session.prompt("Now say goodbye.");
// Back to the first answer, with a summary of the branch left: a second
// child of that answer, in the same file.
await session.navigateTree(answer, { summarize: true });
await session.prompt("Say goodbye in French instead.");
await session.prompt("Read `notes.txt` and tell me what it says.");
await session.compact();
await session.prompt("Now say bye once more.");
console.log(sessionManager.getSessionFile());
