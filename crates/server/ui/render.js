// Drawing: small DOM builders for every surface. Text from the store (a
// model's, a person's, a tool's) only ever reaches the page as a text node
// or through markdown-it with raw HTML off, which escapes it; links that
// are not http(s) or mailto are dropped by markdown-it's own check.

import markdownit from './vendor/markdown-it.esm.min.mjs';
import { reasonLabel } from './handoff.js';
import { toolView } from './tools.js';

// `breaks`: a line break the model wrote is kept (a poem, an address), as
// the terminal keeps it.
const md = markdownit({ html: false, linkify: false, typographer: false, breaks: true });
// A table column's alignment as a class: the page's content-security
// policy allows no inline style, so markdown-it's `style="text-align:…"`
// would be refused (and said in the console, once a cell).
for (const rule of ['th_open', 'td_open']) {
  md.renderer.rules[rule] = (tokens, i, options, env, self) => {
    const style = tokens[i].attrGet('style');
    if (style) {
      tokens[i].attrs = tokens[i].attrs.filter(([name]) => name !== 'style');
      const align = /text-align:\s*(left|center|right)/.exec(style);
      if (align) tokens[i].attrJoin('class', `align-${align[1]}`);
    }
    return self.renderToken(tokens, i, options);
  };
}
const defaultLinkOpen = md.renderer.rules.link_open || ((tokens, i, options, env, self) => self.renderToken(tokens, i, options));
md.renderer.rules.link_open = (tokens, i, options, env, self) => {
  tokens[i].attrSet('target', '_blank');
  tokens[i].attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen(tokens, i, options, env, self);
};

/** `el('div', {class: 'x', onclick: f}, child, 'text', …)`. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Markdown, rendered safely into a `div.markdown`. */
export function markdown(text) {
  const node = el('div', { class: 'markdown' });
  node.innerHTML = md.render(text || '');
  return node;
}

/** `12.3k`, `200k`, `1.5M`. */
export function compact(n) {
  if (n < 1000) return String(n);
  if (n < 1000000) return `${trim1(n / 1000)}k`;
  return `${trim1(n / 1000000)}M`;
}

function trim1(x) {
  return (Math.round(x * 10) / 10).toFixed(1).replace(/\.0$/, '');
}

/** `just now`, `5 min ago`, `3 h ago`, `2 d ago`, or the date. */
export function relativeTime(iso, now = Date.now()) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  if (s < 30 * 86400) return `${Math.round(s / 86400)} d ago`;
  return new Date(then).toISOString().slice(0, 10);
}

/** The tone of a context fraction: the runtime's own thresholds. */
export function meterTone(fraction) {
  if (fraction >= 0.85) return 'red';
  if (fraction >= 0.7) return 'amber';
  return 'muted';
}

const SVG = 'http://www.w3.org/2000/svg';

/** The meter's words: `Context: 12.3k of 200k tokens used (6%)`, marked when estimated. */
export function meterLabel(usage) {
  const words = `Context: ${compact(usage.tokens)} of ${compact(usage.window)} tokens used (${usage.percent}%)`;
  return usage.estimated ? `${words}, estimated` : words;
}

/**
 * The ContextUsageMeter: a ring that fills clockwise from the top, or
 * nothing before the session has a measurement. `usage` is the server's
 * `contextUsage` (`{tokens, window, percent, estimated}`), computed once
 * there by the function the per-turn block uses: the page does no sums.
 * `px` is its size (18 in the header).
 */
export function contextMeter(usage, px = 18) {
  if (!usage || !usage.window) return null;
  const fraction = Math.min(1, usage.tokens / usage.window);
  const tone = meterTone(usage.tokens / usage.window);
  const label = meterLabel(usage);
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 18 18');
  svg.setAttribute('width', String(px));
  svg.setAttribute('height', String(px));
  svg.setAttribute('aria-hidden', 'true');
  const r = 7;
  const length = 2 * Math.PI * r;
  const track = document.createElementNS(SVG, 'circle');
  for (const [k, v] of [['cx', 9], ['cy', 9], ['r', r], ['class', 'meter-track']]) track.setAttribute(k, v);
  const fill = document.createElementNS(SVG, 'circle');
  for (const [k, v] of [['cx', 9], ['cy', 9], ['r', r], ['class', 'meter-fill'],
    ['stroke-dasharray', `${(fraction * length).toFixed(2)} ${length.toFixed(2)}`], ['transform', 'rotate(-90 9 9)']]) {
    fill.setAttribute(k, v);
  }
  svg.append(track, fill);
  return el('span', { class: `meter tone-${tone}`, role: 'img', 'aria-label': label, title: label, tabindex: 0, 'data-tone': tone }, svg);
}

/** `“title”`, or a placeholder for an untitled session. */
export function quoted(title) {
  return `“${title || 'Untitled'}”`;
}

/** A unified diff, each line coloured by what it is (and said by a sign, not colour alone). */
export function diffBlock(diff, cls = 'diff') {
  const kind = (line) => (line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'same');
  return el('pre', { class: cls }, diff.replace(/\n$/, '').split('\n').map((line) => el('span', { class: kind(line) }, `${line}\n`)));
}

let diffs = 0;

/**
 * Makes `node` a labelled region in the tab order while its content is
 * taller than its box, so a keyboard can scroll it; plain again when not.
 */
function scrollsByKeyboard(node, label) {
  if (typeof ResizeObserver !== 'function') return;
  new ResizeObserver(() => {
    const scrolls = node.scrollHeight > node.clientHeight + 1;
    if (scrolls === node.hasAttribute('tabindex')) return;
    if (scrolls) {
      node.setAttribute('tabindex', '0');
      node.setAttribute('role', 'region');
      node.setAttribute('aria-label', label);
    } else {
      for (const name of ['tabindex', 'role', 'aria-label']) node.removeAttribute(name);
    }
  }).observe(node);
}

/** How many lines a diff has (a last newline ends one, starts none). */
export function diffLines(diff) {
  return diff ? diff.replace(/\n$/, '').split('\n').length : 0;
}

/**
 * A change's diff under its tool row: the diff as shown (cut after its
 * first lines, ending `… N more lines`), and, when the whole diff was
 * kept, a button that swaps in the whole of it and back. Both are drawn
 * alike; the box scrolls, and takes the focus so a keyboard scrolls it.
 */
export function changeDiff(diff, whole, path) {
  const id = `diff-${++diffs}`;
  const box = (text) => {
    const pre = diffBlock(text);
    pre.id = id;
    pre.classList.toggle('whole', text === whole);
    scrollsByKeyboard(pre, `${text === whole ? 'Whole diff' : 'Diff'} of ${path || 'the file'}`);
    return pre;
  };
  let shown = box(diff);
  if (!whole) return [shown];
  const lines = diffLines(whole);
  const toggle = el('button', { type: 'button', class: 'button small diff-toggle', 'aria-expanded': 'false', 'aria-controls': id });
  const label = () => {
    const open = toggle.getAttribute('aria-expanded') === 'true';
    toggle.textContent = open ? 'Show the shortened diff' : `Show the whole diff (${lines} lines)`;
  };
  toggle.addEventListener('click', () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    toggle.setAttribute('aria-expanded', String(open));
    const next = box(open ? whole : diff);
    shown.replaceWith(next);
    shown = next;
    label();
    // The box grew or shrank above the button: keep it where the eye is.
    toggle.scrollIntoView({ block: 'nearest' });
  });
  label();
  return [shown, toggle];
}

const MARKS = { running: ['…', 'running'], ok: ['✓', 'succeeded'], failed: ['✗', 'failed'] };

/**
 * One tool call: a row that says what ran (the command, the path, the
 * pattern) and what it came to (an exit code, a size, a count), with a
 * file change's diff shown under it and a command's output collapsed.
 * Everything is drawn from the call's arguments and the result's typed
 * `facts`; the result's text (what the model read) is there to open.
 * `row.setResult(result)` fills it in when the result comes.
 */
export function toolRow(call) {
  const mark = el('span', { class: 'mark', role: 'img' });
  const name = el('span', { class: 'tool-name' }, call.name);
  const summary = el('span', { class: 'tool-summary' });
  const meta = el('span', { class: 'tool-meta' });
  const body = el('div', { class: 'tool-body' });
  const details = el('details', { class: 'tool', 'data-call': call.id },
    el('summary', {}, mark, name, summary, meta), body);
  const diff = el('div', { class: 'tool-diff' });
  const row = el('div', { class: 'tool-row' }, details, diff);
  const draw = (result) => {
    const view = toolView(call, result);
    const [sign, words] = MARKS[view.state];
    mark.textContent = sign;
    mark.setAttribute('aria-label', words);
    details.classList.toggle('failed', view.state === 'failed');
    details.classList.toggle('done', view.state !== 'running');
    summary.textContent = view.summary;
    summary.title = view.summary;
    meta.textContent = view.meta;
    diff.replaceChildren(...(view.diff ? changeDiff(view.diff, view.whole, view.summary) : []));
    const parts = [];
    if (view.command && view.command.includes('\n')) parts.push(el('div', { class: 'label' }, 'Command'), el('pre', { class: 'tool-command' }, view.command));
    if (view.output) {
      const lines = view.output.lines;
      parts.push(el('div', { class: 'label' }, lines ? `Output, last lines of ${lines}` : 'Output, last lines'),
        el('pre', { class: 'tool-output' }, view.output.text));
    }
    parts.push(el('details', { class: 'tool-raw' }, el('summary', {}, 'Arguments'), el('pre', { class: 'tool-args' }, JSON.stringify(call.arguments, null, 2))));
    if (result) parts.push(el('details', { class: 'tool-raw' }, el('summary', {}, 'Result, as the model read it'), el('pre', { class: 'tool-result' }, result.content)));
    body.replaceChildren(...parts);
  };
  draw(null);
  row.setResult = draw;
  return row;
}

let bubbles = 0;

/**
 * A small round button that opens the details dialog; `bubble`, when
 * given, is shown beside it while it is hovered or focused.
 */
export function infoButton(label, onclick, bubble) {
  const id = `bubble-${++bubbles}`;
  const button = el('button', { type: 'button', class: 'icon info', 'aria-label': label, 'aria-describedby': bubble ? id : null, onclick }, 'i');
  if (!bubble) return button;
  return el('span', { class: 'info-wrap' }, button, el('div', { class: 'bubble', role: 'tooltip', id }, bubble));
}

/**
 * The predecessor's transition card, in place of the `continue_session`
 * row: `Continuing in “title”` while the call has no result, `Continued in
 * “title”` after, `Continuation refused` (with the error) when refused.
 * `body` is what expanding shows.
 */
export function transitionCard({ call, result, title, reason, onOpen, onInfo, body, bubble }) {
  const refused = result && result.isError;
  const label = refused ? 'Continuation refused' : result ? `Continued in ${quoted(title)}` : `Continuing in ${quoted(title)}`;
  const reasonText = reasonLabel(reason);
  // The buttons sit beside the summary, not in it: a summary is itself
  // the control that opens the card, and holds no other.
  return el('div', { class: 'card transition-card' },
    el('details', { class: `transition${refused ? ' refused' : ''}`, 'data-call': call.id },
      el('summary', {},
        el('span', { class: 'chevron', 'aria-hidden': 'true' }),
        el('span', { class: 'transition-text' }, label, !refused && reasonText ? el('span', { class: 'reason' }, ` (${reasonText})`) : null)),
      el('div', { class: 'transition-body' }, refused ? el('pre', { class: 'error-text' }, result.content) : body)),
    el('span', { class: 'card-actions' },
      !refused && result && onOpen ? el('button', { type: 'button', class: 'button small', onclick: onOpen }, 'Open session') : null,
      infoButton('Continuation details', onInfo, bubble)));
}

/** The successor's handoff card, in place of the raw projection message. */
export function handoffCard({ title, reason, body, onOpen, onInfo, bubble }) {
  const reasonText = reasonLabel(reason);
  return el('div', { class: 'card handoff-card' },
    el('details', { class: 'handoff' },
      el('summary', {},
        el('span', { class: 'chevron', 'aria-hidden': 'true' }),
        el('span', { class: 'handoff-text' }, `Handoff from ${quoted(title)}`, reasonText ? el('span', { class: 'reason' }, ` (${reasonText})`) : null)),
      el('div', { class: 'handoff-body' }, body)),
    el('span', { class: 'card-actions' },
      el('button', { type: 'button', class: 'button small', onclick: onOpen }, 'Open session'),
      infoButton('Handoff details', onInfo, bubble)));
}

/**
 * A handoff's sections (what `handoffSections` returns) and its source
 * lines. A section's title is a text node in a heading, its items text
 * through markdown: a key the model made up stays one heading.
 */
export function handoffBody(sections, sources) {
  const parts = (sections || []).map((s) => el('section', { class: 'handoff-section' },
    el('h4', {}, s.title),
    s.prose !== null ? markdown(s.prose) : el('ul', {}, s.items.map((item) => el('li', {}, markdown(item))))));
  return el('div', { class: 'handoff-view' },
    parts.length ? parts : el('p', { class: 'muted' }, 'No handoff text.'),
    sources && sources.length
      ? el('div', { class: 'sources' }, el('div', { class: 'label' }, 'Sources'), el('ul', {}, sources.map((s) => el('li', {}, s))))
      : null);
}

/** A list of manifest ranges (`manifestRanges`' items): `Excerpt: thread seq 3–9`. */
export function rangeList(ranges, empty) {
  if (!ranges.length) return el('p', { class: 'muted' }, empty);
  return el('ul', { class: 'ranges' }, ranges.map((r) => el('li', {}, `${r.label}: ${r.line}`)));
}
