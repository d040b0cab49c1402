// The details dialog: a continuation's lineage, handoff and what its
// projection carried, loaded when someone asks for them.

import { api } from './api.js';
import { edge, edgeHandoff } from './edges.js';
import { manifestRanges, reasonLabel } from './handoff.js';
import { $ } from './page.js';
import { el, rangeList } from './render.js';

function openDialog(title, ...body) {
  $('details-title').textContent = title;
  $('details-body').replaceChildren(...body);
  const dialog = $('details');
  if (!dialog.open) dialog.showModal();
}


export function reasonText(reason) {
  return reasonLabel(reason) ? `${reason} (${reasonLabel(reason)})` : reason;
}

export function facts(pairs) {
  return el('dl', { class: 'facts' }, pairs.filter(([, value]) => value !== undefined && value !== null && value !== '')
    .flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, String(value))]));
}

/** The edge's lineage, as facts. */
function lineage(found) {
  return facts([
    ['Continuation', found.id],
    ['Origin session', found.originSessionId],
    ['Predecessor session', found.predecessorSessionId],
    ['Successor session', found.successorSessionId],
    ['Initiating message', found.manifest ? `seq ${found.manifest.initiatingSeq}` : null],
    ['Reason', reasonText(found.reason)],
    ['Tool call', found.toolCallId],
  ]);
}

/** What the projection carried and left out, from the manifest. */
function carried(found) {
  const ranges = manifestRanges(found.manifest);
  return [
    el('h3', {}, 'Carried'), rangeList(ranges.included, 'Nothing from the thread was carried.'),
    el('h3', {}, 'Left out'), rangeList(ranges.omitted, 'Nothing cited or recent was left out.'),
  ];
}

export async function transitionDetails(v, known, found) {
  const refused = known.result && known.result.isError;
  if (refused || !found) {
    const args = known.call.arguments || {};
    openDialog(refused ? 'Continuation refused' : 'Continuation',
      facts([['Tool call', known.call.id], ['Title asked for', typeof args.title === 'string' ? args.title : null], ['Reason', reasonText(args.reason)]]),
      refused ? el('pre', { class: 'error-text' }, known.result.content) : el('p', { class: 'muted' }, 'The continuation has not been made yet.'));
    return;
  }
  openDialog('Continuation',
    el('h3', {}, 'Lineage'), lineage(found),
    el('h3', {}, 'Handoff'), edgeHandoff(found),
    ...carried(found));
}

export async function handoffDetails(v, message) {
  const continuationId = message.meta.projectionOf;
  const holder = el('div', { 'aria-busy': 'true' }, el('p', { class: 'muted' }, 'Loading…'));
  const excerpts = el('div', { class: 'excerpts', 'aria-busy': 'true' }, el('p', { class: 'muted' }, 'Loading what was carried…'));
  openDialog('Handoff',
    holder,
    el('h3', {}, 'Loaded as the model received them'), excerpts,
    el('details', { class: 'raw' }, el('summary', {}, 'Projection as the model read it'), el('pre', {}, message.content)));
  let found;
  try {
    found = await edge(v, continuationId);
  } catch (e) {
    holder.replaceChildren(el('p', { class: 'problem' }, `Cannot load the continuation: ${e.message}`));
    excerpts.replaceChildren();
    return;
  } finally {
    holder.setAttribute('aria-busy', 'false');
  }
  holder.replaceChildren(el('h3', {}, 'Lineage'), lineage(found), el('h3', {}, 'Handoff'), edgeHandoff(found), ...carried(found));
  // What was carried is loaded now, when someone asks for it, never before.
  try {
    const loaded = [];
    for (const range of manifestRanges(found.manifest).included) {
      const text = await api.thread(found.predecessorSessionId, range.fromSeq, range.toSeq);
      loaded.push(el('figure', { class: 'excerpt' }, el('figcaption', {}, `${range.label}: ${range.line}`), el('pre', {}, text)));
    }
    excerpts.replaceChildren(...(loaded.length ? loaded : [el('p', { class: 'muted' }, 'Nothing from the thread was carried.')]));
  } catch (e) {
    excerpts.replaceChildren(el('p', { class: 'problem' }, `Cannot load what was carried: ${e.message}`));
  }
  excerpts.setAttribute('aria-busy', 'false');
}
