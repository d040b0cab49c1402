// Pure helpers for continuations: the words people read (reason labels,
// handoff sections, source lines) and the parts of a projection message.
// No DOM here; render.js draws what these return.

const REASONS = {
  topic_change: 'New topic',
  phase_change: 'New phase',
  refocus: 'Refocused',
  context_pressure: 'Context was full',
  user_request: 'Requested',
};

/** The label shown after a title, or '' for `other` and unknown reasons. */
export function reasonLabel(reason) {
  return REASONS[reason] || '';
}

const SECTIONS = [
  ['purpose', 'Purpose'],
  ['currentRequest', 'Current request'],
  ['establishedFacts', 'Established facts'],
  ['decisions', 'Decisions'],
  ['openQuestions', 'Open questions'],
  ['nextActions', 'Next actions'],
  ['cautions', 'Cautions'],
];

function present(value) {
  if (Array.isArray(value)) return value.some((v) => typeof v === 'string' && v.trim() !== '');
  return typeof value === 'string' && value.trim() !== '';
}

function sectionBody(value) {
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string' && v.trim() !== '').map((v) => `- ${v}`).join('\n');
  return String(value);
}

/**
 * A handoff object (the `continue_session` call's `handoff`) as markdown:
 * the sections in their fixed order, each only when present, then any
 * section the agent added (`extra`, or any other key).
 */
export function handoffMarkdown(handoff) {
  if (!handoff || typeof handoff !== 'object') return '';
  const parts = [];
  for (const [key, title] of SECTIONS) {
    if (present(handoff[key])) parts.push(`## ${title}\n${sectionBody(handoff[key])}`);
  }
  const extra = handoff.extra && typeof handoff.extra === 'object' ? handoff.extra : {};
  const known = new Set([...SECTIONS.map(([k]) => k), 'extra']);
  const added = Object.entries(extra).concat(Object.entries(handoff).filter(([k]) => !known.has(k)));
  for (const [key, value] of added) {
    if (present(value)) parts.push(`## ${key}\n${sectionBody(value)}`);
  }
  return parts.join('\n\n');
}

/** A projection's `<handoff>` markdown without the sections that say `(none)`. */
export function trimHandoff(text) {
  return text
    .split(/\n(?=## )/)
    .filter((section) => {
      const body = section.replace(/^## [^\n]*\n?/, '').trim();
      return body !== '' && body !== '(none)';
    })
    .join('\n\n')
    .trim();
}

/** One line per source: `resource URL`, `memory PATH`, `thread seq N`, `thread seq A–B`. */
export function sourceLine(source) {
  switch (source && source.kind) {
    case 'resource': return `resource ${source.uri}`;
    case 'memory': return `memory ${source.path}`;
    case 'session_event': return `thread seq ${source.seq}`;
    case 'session_events':
      return source.fromSeq === source.toSeq ? `thread seq ${source.fromSeq}` : `thread seq ${source.fromSeq}–${source.toSeq}`;
    default: return JSON.stringify(source);
  }
}

/**
 * A projection's own source line (`resource:URI`, `memory:PATH`,
 * `thread:ID seq A to B`, `thread:ID seq N`) in the words people read.
 */
export function projectionSourceLine(line) {
  let m = /^thread:\S+ seq (\d+) to (\d+)$/.exec(line);
  if (m) return m[1] === m[2] ? `thread seq ${m[1]}` : `thread seq ${m[1]}–${m[2]}`;
  m = /^thread:\S+ seq (\d+)$/.exec(line);
  if (m) return `thread seq ${m[1]}`;
  m = /^(resource|memory):(.*)$/.exec(line);
  if (m) return `${m[1]} ${m[2]}`;
  return line;
}

function block(text, tag) {
  const match = text.match(new RegExp(`<${tag}>\\n?([\\s\\S]*?)\\n?</${tag}>`));
  return match ? match[1] : null;
}

/**
 * The parts of a projection message's text: its lineage lines as a map,
 * the handoff markdown (trimmed of empty sections), the source lines and
 * the excerpts' ranges. Excerpt text is not kept: the page loads it
 * through the API when someone asks for it.
 */
export function parseProjection(text) {
  const lineage = {};
  for (const line of (block(text, 'lineage') || '').split('\n')) {
    const at = line.indexOf(': ');
    if (at > 0) lineage[line.slice(0, at)] = line.slice(at + 2);
  }
  const sources = (block(text, 'sources') || '')
    .split('\n')
    .map((l) => l.replace(/^- /, '').trim())
    .filter((l) => l !== '' && l !== '(none)')
    .map(projectionSourceLine);
  const excerpts = [];
  for (const match of text.matchAll(/<excerpt from="(\d+)" to="(\d+)"/g)) {
    excerpts.push({ fromSeq: Number(match[1]), toSeq: Number(match[2]) });
  }
  return { lineage, handoff: trimHandoff(block(text, 'handoff') || ''), sources, excerpts };
}
