// Pure helpers for continuations: the words people read (reason labels,
// handoff sections, source and range lines). Everything here reads typed
// values the server gives (the edge, its manifest, the runtime's own
// parsed handoff), never the projection's text: that text is written for
// the model, and rewording it must not change the page. No DOM here;
// render.js draws what these return.

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

/** A section's lines: a string is one, a list is its non-blank strings. */
function lines(value) {
  if (typeof value === 'string') return value.trim() === '' ? [] : [value];
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string' && v.trim() !== '');
  return [];
}

/**
 * A handoff as the runtime parsed it (`GET /api/continuations/{id}`'s
 * `handoff`: the seven sections, `extra` normalised to lists of strings)
 * as sections to draw: `[{title, prose, items}]`, the named ones in their
 * fixed order, each only when present, then the agent's own in key order.
 * `prose` is a single paragraph (purpose, current request); `items` a
 * list. A title is only ever drawn as text, so a key cannot become markup.
 */
export function handoffSections(handoff) {
  if (!handoff || typeof handoff !== 'object') return [];
  const out = [];
  for (const [key, title] of SECTIONS) {
    const value = handoff[key];
    const items = lines(value);
    if (!items.length) continue;
    out.push(typeof value === 'string' ? { title, prose: value.trim(), items: [] } : { title, prose: null, items });
  }
  const extra = handoff.extra && typeof handoff.extra === 'object' ? handoff.extra : {};
  for (const key of Object.keys(extra).sort()) {
    const items = lines(extra[key]);
    if (items.length) out.push({ title: key, prose: null, items });
  }
  return out;
}

/** `thread seq N` or `thread seq A–B`. */
export function rangeLine(fromSeq, toSeq) {
  return fromSeq === toSeq ? `thread seq ${fromSeq}` : `thread seq ${fromSeq}–${toSeq}`;
}

/**
 * One line per source, as the edge's manifest records it: `resource URL`,
 * `memory PATH`, `thread seq N`, `thread seq A–B`.
 */
export function sourceLine(source) {
  switch (source && source.kind) {
    case 'resource': return `resource ${source.uri}`;
    case 'memory': return `memory ${source.path}`;
    case 'session_event': return rangeLine(source.seq, source.seq);
    case 'session_events': return rangeLine(source.fromSeq, source.toSeq);
    default: return 'a source of a kind this page does not know';
  }
}

const PARTS = { excerpt: 'Excerpt', recent_exchange: 'Recent exchange' };

/** What a manifest range was: `Excerpt`, `Recent exchange`. */
export function partLabel(part) {
  return PARTS[part] || 'Range';
}

/**
 * What a projection carried and left out, from its manifest:
 * `{included: [{label, line, fromSeq, toSeq}], omitted: [...]}` in the
 * manifest's order.
 */
export function manifestRanges(manifest) {
  const one = (range) => ({
    label: partLabel(range.part),
    line: rangeLine(range.fromSeq, range.toSeq),
    fromSeq: range.fromSeq,
    toSeq: range.toSeq,
  });
  return {
    included: ((manifest && manifest.included) || []).map(one),
    omitted: ((manifest && manifest.omitted) || []).map(one),
  };
}
