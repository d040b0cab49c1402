// Search hits as the page draws them: `GET /api/search`'s hits in, DOM
// nodes out. No network and no page state here: `app.js` asks and places.
// A snippet's matched words come between « and »; they become <mark>
// elements built as nodes, so a snippet's text is never read as HTML.

import { el, relativeTime } from './render.js';

/** The marks the store puts around a matched word. */
export const MARK_START = '«';
export const MARK_END = '»';

/**
 * A snippet as parts, `[{text, marked}]` in order: the text between
 * `«` and `»` marked, the rest not. An unclosed mark runs to the end;
 * empty parts are left out.
 */
export function snippetParts(snippet) {
  const parts = [];
  let rest = String(snippet || '');
  while (rest) {
    const start = rest.indexOf(MARK_START);
    if (start < 0) {
      parts.push({ text: rest, marked: false });
      break;
    }
    if (start > 0) parts.push({ text: rest.slice(0, start), marked: false });
    rest = rest.slice(start + MARK_START.length);
    const end = rest.indexOf(MARK_END);
    const word = end < 0 ? rest : rest.slice(0, end);
    if (word) parts.push({ text: word, marked: true });
    rest = end < 0 ? '' : rest.slice(end + MARK_END.length);
  }
  // Neighbours alike are one part (a mark around nothing leaves two).
  return parts.reduce((out, p) => {
    const last = out[out.length - 1];
    if (last && last.marked === p.marked) last.text += p.text;
    else out.push({ ...p });
    return out;
  }, []);
}

/** The snippet as a node: its text, the matched words in <mark>. */
export function snippetNode(snippet) {
  return el('span', { class: 'hit-snippet' },
    snippetParts(snippet).map((p) => (p.marked ? el('mark', {}, p.text) : p.text)));
}

/** Where a hit opens: its session, at its event. */
export function hitHref(hit) {
  return `/s/${encodeURIComponent(hit.sessionId)}#seq-${hit.seq}`;
}

/** The event a page's address points at (`#seq-12`), or null. */
export function seqOfHash(hash) {
  const match = /^#seq-([1-9][0-9]*)$/.exec(hash || '');
  return match ? Number(match[1]) : null;
}

/** What kind of content matched, in words. */
const KIND_WORDS = {
  user: 'You',
  assistant: 'Answer',
  thinking: 'Thinking',
  tool_call: 'Tool call',
  tool_result: 'Tool result',
  title: 'Title',
  recap: 'Recap',
  handoff: 'Handoff',
};

export function kindWord(kind) {
  return KIND_WORDS[kind] || kind;
}

/**
 * One hit as a list item: a link to the session at the event with its
 * title, where and when, the snippet, and the forks that share it or the
 * successor that carries it on. `open(hit)` runs on a click.
 */
export function hitItem(hit, open, shortCwd = (cwd) => cwd) {
  const also = [];
  if ((hit.sharedWith || []).length) also.push(`shared with ${hit.sharedWith.length} fork${hit.sharedWith.length === 1 ? '' : 's'}`);
  if (hit.continuedIn) also.push('continued in a successor');
  return el('li', { class: 'search-hit', 'data-session': hit.sessionId, 'data-seq': hit.seq },
    el('a', { href: hitHref(hit), onclick: (e) => { e.preventDefault(); open(hit); } },
      el('span', { class: 'item-title' }, hit.title || 'Untitled'),
      el('span', { class: 'item-meta' },
        `${kindWord(hit.kind)} · [${hit.seq}] · `,
        el('time', { datetime: hit.at, title: hit.at }, relativeTime(hit.at)),
        hit.cwd ? ' · ' : null,
        hit.cwd ? el('span', { class: 'cwd', title: hit.cwd }, shortCwd(hit.cwd)) : null),
      snippetNode(hit.snippet),
      also.length ? el('span', { class: 'item-meta' }, also.join(' · ')) : null));
}

/** The line above the hits: how many, for what. */
export function hitsLine(query, hits) {
  if (!hits.length) return `No match for “${query}”.`;
  return `${hits.length} hit${hits.length === 1 ? '' : 's'} for “${query}”`;
}
