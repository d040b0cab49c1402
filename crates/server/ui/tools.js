// What a tool row says, from typed values only: the call's arguments (the
// JSON the model gave the tool) and the result's `facts` (what the call
// came to: a command's exit, a file's diff, a read's size). The result's
// text is written for the model; it is shown when someone opens the row,
// never read for a fact. No DOM here; render.js draws what this returns.

/** `532 ms`, `1.2 s`, `2 min 3 s`. */
export function duration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(Math.round(ms / 100) / 10).toFixed(1).replace(/\.0$/, '')} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** `812 B`, `4.1 KB`, `1.2 MB`. */
export function size(bytes) {
  if (typeof bytes !== 'number') return '';
  if (bytes < 1024) return `${bytes} B`;
  const one = (x) => (Math.round(x * 10) / 10).toFixed(1).replace(/\.0$/, '');
  if (bytes < 1024 * 1024) return `${one(bytes / 1024)} KB`;
  return `${one(bytes / (1024 * 1024))} MB`;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** How a command ended, in words, or '' when it exited 0. */
export function exitWords(run) {
  switch (run.exit) {
    case 'code': return run.code === 0 ? '' : `exit ${run.code}`;
    case 'signal': return `killed by signal ${run.signal}`;
    case 'timeout': return `timed out after ${duration(run.timeout)}`;
    default: return 'ended without an exit code';
  }
}

function firstLine(value) {
  return typeof value === 'string' ? value.split('\n')[0] : '';
}

function str(value) {
  return typeof value === 'string' ? value : '';
}

/** What a call is about, from its arguments alone (no result yet, or none with facts). */
function fromArguments(name, args) {
  switch (name) {
    case 'bash': return firstLine(args.command);
    case 'edit': case 'write_file': case 'read_file': case 'list': case 'remember': return str(args.path);
    case 'grep': return args.pattern ? `${args.pattern}${args.path ? ` in ${args.path}` : ''}` : '';
    case 'status': return [str(args.title), str(args.description)].filter(Boolean).join(' — ');
    case 'plan': return Array.isArray(args.steps) ? plural(args.steps.length, 'step') : '';
    case 'delegate': return firstLine(args.task);
    case 'read': return str(args.target);
    default: {
      const first = Object.values(args).find((v) => typeof v === 'string' && v.trim() !== '');
      return firstLine(first);
    }
  }
}

/**
 * A tool row's parts: `{state, summary, meta, command, diff, output}`.
 * `state` is `running` (no result yet), `ok` or `failed` (the call
 * failed or was refused, or its command did not exit 0); `summary` says
 * what ran (a command, a path, a pattern); `meta` what it came to (`exit
 * 3 · 1.2 s`, `212 lines · 4.1 KB`, `+3 −1`, `4 matches in 2 files`);
 * `diff` a unified diff for a change, `whole` all of it when `diff` was
 * cut (else null); `output` a command's last lines (`{text, lines}`),
 * shown collapsed.
 */
export function toolView(call, result) {
  const args = call && call.arguments && typeof call.arguments === 'object' ? call.arguments : {};
  const name = (call && call.name) || (result && result.name) || '';
  const facts = result && result.facts && typeof result.facts === 'object' ? result.facts : null;
  const view = {
    state: result ? (result.isError ? 'failed' : 'ok') : 'running',
    summary: fromArguments(name, args),
    meta: '',
    command: name === 'bash' ? str(args.command) : '',
    diff: null,
    whole: null,
    output: null,
  };
  if (!facts) return view;
  const meta = [];
  switch (facts.kind) {
    case 'command': {
      view.command = str(facts.command) || view.command;
      view.summary = firstLine(view.command);
      const ended = exitWords(facts);
      if (ended) {
        view.state = 'failed';
        meta.push(ended);
      }
      if (typeof facts.duration === 'number' && facts.exit !== 'timeout') meta.push(duration(facts.duration));
      if (facts.tail) view.output = { text: facts.tail, lines: typeof facts.lines === 'number' ? facts.lines : null };
      break;
    }
    case 'change':
      view.summary = str(facts.path) || view.summary;
      if (facts.created) meta.push('created');
      meta.push(`+${facts.added ?? 0} −${facts.removed ?? 0}`);
      view.diff = str(facts.diff) || null;
      view.whole = (view.diff && str(facts.whole)) || null;
      break;
    case 'read':
      view.summary = str(facts.path) || view.summary;
      if (typeof facts.from === 'number' && typeof facts.to === 'number' && (facts.from > 1 || facts.to < facts.lines)) {
        meta.push(`lines ${facts.from}–${facts.to} of ${facts.lines}`);
      } else if (typeof facts.lines === 'number') {
        meta.push(plural(facts.lines, 'line'));
      }
      if (typeof facts.bytes === 'number') meta.push(size(facts.bytes));
      break;
    case 'search':
      view.summary = `${facts.pattern}${facts.path ? ` in ${facts.path}` : ''}${facts.glob ? ` (${facts.glob})` : ''}`;
      meta.push(`${plural(facts.matches ?? 0, 'match', 'matches')} in ${plural(facts.files ?? 0, 'file')}`);
      break;
    case 'list':
      view.summary = str(facts.path) || view.summary;
      meta.push(plural(facts.entries ?? 0, 'entry', 'entries'));
      break;
    default:
      break;
  }
  view.meta = meta.filter(Boolean).join(' · ');
  return view;
}
