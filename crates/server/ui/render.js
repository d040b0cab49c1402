// Drawing: small DOM builders for every surface. Text from the store (a
// model's, a person's, a tool's) only ever reaches the page as a text node
// or through markdown-it with raw HTML off, which escapes it; links that
// are not http(s) or mailto are dropped by markdown-it's own check.

import markdownit from './vendor/markdown-it.esm.min.mjs';
import { reasonLabel } from './handoff.js';

const md = markdownit({ html: false, linkify: false, typographer: false });
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

/**
 * How full the context is, from the newest assistant message's usage (as
 * `SessionInfo.lastUsage` folds it) and the session's context window:
 * `{tokens, window, percent}`, or null before there is a measurement.
 */
export function contextUsage(lastUsage, window) {
  if (!lastUsage || !window) return null;
  const tokens = (lastUsage.input || 0) + (lastUsage.cacheRead || 0) + (lastUsage.cacheWrite || 0);
  if (tokens === 0) return null;
  return { tokens, window, percent: Math.floor((tokens * 100) / window) };
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The ContextUsageMeter: a ring that fills clockwise from the top, or
 * nothing before the session has a measurement. `usage` is what
 * [`contextUsage`] returns.
 */
export function contextMeter(usage) {
  if (!usage || !usage.window) return null;
  const fraction = Math.min(1, usage.tokens / usage.window);
  const tone = meterTone(usage.tokens / usage.window);
  const label = `Context: ${compact(usage.tokens)} of ${compact(usage.window)} tokens used (${usage.percent}%)`;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 18 18');
  svg.setAttribute('width', '18');
  svg.setAttribute('height', '18');
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

/** Whether a tool result reports a failure: an error, or a command that exited non-zero. */
export function failed(result) {
  if (!result) return false;
  if (result.isError) return true;
  const exit = /^exit code: (-?\d+)/.exec(result.content || '');
  return exit !== null && exit[1] !== '0';
}

function summaryOf(call) {
  const args = call.arguments || {};
  const first = args.command || args.path || args.pattern || args.query || args.target || '';
  return typeof first === 'string' ? first.split('\n')[0] : '';
}

/** One tool call: a row with its name, a one-line summary and ✓/✗, its arguments and result expandable. */
export function toolRow(call) {
  const mark = el('span', { class: 'mark', 'aria-label': 'running' }, '…');
  const result = el('pre', { class: 'tool-result' });
  const row = el('details', { class: 'tool', 'data-call': call.id },
    el('summary', {}, mark, el('span', { class: 'tool-name' }, call.name), ' ', el('span', { class: 'tool-summary' }, summaryOf(call))),
    el('div', { class: 'tool-body' },
      el('div', { class: 'label' }, 'Arguments'),
      el('pre', { class: 'tool-args' }, JSON.stringify(call.arguments, null, 2)),
      el('div', { class: 'label' }, 'Result'),
      result));
  row.setResult = (res) => {
    const bad = failed(res);
    mark.textContent = bad ? '✗' : '✓';
    mark.setAttribute('aria-label', bad ? 'failed' : 'succeeded');
    row.classList.toggle('failed', bad);
    row.classList.toggle('done', true);
    result.textContent = res.content;
  };
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
 * row. `state` is `pending` (no result yet), `done` or `refused`; `link`
 * the session's `continuedTo` when it names this call's successor.
 */
export function transitionCard({ call, result, title, reason, onOpen, onInfo, body, bubble }) {
  const refused = result && result.isError;
  const label = refused ? 'Continuation refused' : result ? `Continued in ${quoted(title)}` : `Continuing in ${quoted(title)}`;
  const reasonText = reasonLabel(reason);
  const card = el('details', { class: `transition${refused ? ' refused' : ''}`, 'data-call': call.id },
    el('summary', {},
      el('span', { class: 'chevron', 'aria-hidden': 'true' }),
      el('span', { class: 'transition-text' }, label, !refused && reasonText ? el('span', { class: 'reason' }, ` (${reasonText})`) : null),
      el('span', { class: 'actions' },
        !refused && result && onOpen ? el('button', { type: 'button', class: 'button small', onclick: (e) => { e.preventDefault(); onOpen(); } }, 'Open session') : null,
        infoButton('Continuation details', (e) => { e.preventDefault(); onInfo(); }, bubble))),
    el('div', { class: 'transition-body' }, refused ? el('pre', { class: 'error-text' }, result.content) : body));
  return card;
}

/** The successor's handoff card, in place of the raw projection message. */
export function handoffCard({ title, reason, handoff, sources, onOpen, onInfo, bubble }) {
  const reasonText = reasonLabel(reason);
  return el('details', { class: 'handoff' },
    el('summary', {},
      el('span', { class: 'chevron', 'aria-hidden': 'true' }),
      el('span', { class: 'handoff-text' }, `Handoff from ${quoted(title)}`, reasonText ? el('span', { class: 'reason' }, ` (${reasonText})`) : null),
      el('span', { class: 'actions' },
        el('button', { type: 'button', class: 'button small', onclick: (e) => { e.preventDefault(); onOpen(); } }, 'Open session'),
        infoButton('Handoff details', (e) => { e.preventDefault(); onInfo(); }, bubble))),
    el('div', { class: 'handoff-body' }, handoffBody(handoff, sources)));
}

/** The handoff markdown and its source lines. */
export function handoffBody(handoffText, sources) {
  return el('div', {},
    handoffText ? markdown(handoffText) : el('p', { class: 'muted' }, 'No handoff text.'),
    sources && sources.length
      ? el('div', { class: 'sources' }, el('div', { class: 'label' }, 'Sources'), el('ul', {}, sources.map((s) => el('li', {}, s))))
      : null);
}
