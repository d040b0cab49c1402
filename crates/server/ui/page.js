// What the page's modules share, and nothing else: the element lookup, the
// sessions listed, the follow rule, the transcript's scroll position, and
// the page's actions, which app.js wires at start so the modules that draw
// a session can open another without importing the page's wiring.

import { Following } from './follow.js';

export const $ = (id) => document.getElementById(id);

/** `node.replaceChildren`, leaving out the parts that are not there. */
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
}

/** The session list, newest first, as the API answers it. */
export const listed = { sessions: [] };

/** Whether a continuation is followed into its successor (the page's follow rule). */
export const following = new Following();

/**
 * How many of a session's newest events are drawn at first; earlier ones
 * come on request, so a long session opens as fast as a short one.
 * `?window=N` in the address changes it.
 */
export const WINDOW = Number(new URLSearchParams(window.location.search).get('window')) || 400;

/**
 * The page's actions (`navigate`, `openSession`, `pathSession`, `refresh`,
 * `refreshList`, `forkFrom`), set once by app.js before anything is drawn.
 */
export const actions = {};

/** Whether the transcript is scrolled to (near) its end: new text then keeps it there. */
export function atBottom(v) {
  const scroller = v.dom.scroller;
  return !scroller || scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
}

export function scrollDown(v) {
  if (v.dom.scroller) v.dom.scroller.scrollTop = v.dom.scroller.scrollHeight;
}
