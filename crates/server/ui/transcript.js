// The transcript of the session on screen: its events drawn as rows, each
// call paired with its result, and the cards of a continuation (the
// transition in the predecessor, the handoff in the successor).

import { api } from './api.js';
import { facts, handoffDetails, reasonText, transitionDetails } from './dialogs.js';
import { edge, edgeHandoff, edgeOfCall, successorTitle } from './edges.js';
import { settleApproval, showApproval } from './live.js';
import { actions, atBottom, scrollDown, WINDOW } from './page.js';
import { el, handoffCard, markdown, quoted, toolRow, transitionCard } from './render.js';

/** Above a transcript that starts after seq 1: a button that draws it from earlier on. */
export function drawEarlierButton(v) {
  if (v.start <= 1) return;
  const earlier = v.start - 1;
  const button = el('button', { type: 'button', class: 'link earlier', onclick: () => drawFrom(v, Math.max(1, v.start - WINDOW)) },
    `Show earlier events (${earlier} more)`);
  v.dom.transcript.append(el('li', { class: 'event' }, button));
}

/** Draws the transcript again from `start`: pairs every call with its result. */
async function drawFrom(v, start) {
  v.start = start;
  v.lastSeq = start - 1;
  v.calls.clear();
  v.dom.transcript.replaceChildren();
  drawEarlierButton(v);
  await actions.refresh(v);
  try {
    for (const frame of (await api.approvals(v.id)).approvals) {
      v.approvals.delete(frame.callId);
      showApproval(v, frame);
    }
  } catch { /* the frames will tell */ }
}

/**
 * Scrolls to the event at `seq` and marks it: the row drawn for it, or
 * for the call a result belongs to (the last row at or before it), opened
 * when it folds, and focused so the keyboard starts there.
 */
export function showEvent(v, seq) {
  let found = null;
  for (const item of v.dom.transcript.querySelectorAll('[data-seq]')) {
    if (Number(item.dataset.seq) <= seq) found = item;
  }
  if (!found) return;
  v.dom.transcript.querySelector('.event.hit')?.classList.remove('hit');
  found.classList.add('hit');
  for (const fold of found.querySelectorAll(':scope > details')) fold.open = true;
  found.setAttribute('tabindex', '-1');
  found.scrollIntoView({ block: 'center' });
  found.focus({ preventScroll: true });
}

export function row(v, node, seq) {
  const item = el('li', { class: 'event', 'data-seq': seq, id: seq ? `seq-${seq}` : null }, node);
  const follow = atBottom(v);
  v.dom.transcript.append(item);
  if (follow) scrollDown(v);
  return item;
}


export function appendEvent(v, stored) {
  const e = stored.event;
  switch (e.type) {
    case 'message':
      return appendMessage(v, stored);
    case 'thinking':
      v.dom.live.querySelector('.live-thinking')?.remove();
      return row(v, el('details', { class: 'thinking' }, el('summary', {}, 'Thinking'), el('pre', {}, e.text)), stored.seq);
    case 'tool_call': {
      if (e.name === 'continue_session') {
        const holder = row(v, el('div'), stored.seq);
        v.calls.set(e.id, { call: e, holder, continuation: true });
        drawTransition(v, e.id, null);
        return holder;
      }
      const tool = toolRow(e);
      v.calls.set(e.id, { call: e, node: tool });
      const item = row(v, tool, stored.seq);
      // A question that arrived before its call was drawn moves under it.
      const waiting = v.approvals.get(e.id);
      if (waiting) {
        const follow = atBottom(v);
        item.after(el('li', { class: 'event' }, waiting.card));
        if (follow) scrollDown(v);
      }
      return item;
    }
    case 'tool_result': {
      const known = v.calls.get(e.toolCallId);
      settleApproval(v, e.toolCallId);
      if (known && known.continuation) return drawTransition(v, e.toolCallId, e);
      if (known) return known.node.setResult(e);
      const orphan = toolRow({ id: e.toolCallId, name: e.name, arguments: {} });
      orphan.setResult(e);
      return row(v, orphan, stored.seq);
    }
    case 'permission_denied':
      return row(v, el('p', { class: 'note denied' }, `${e.tool} was not allowed: ${e.detail}`), stored.seq);
    case 'context_compacted':
      return row(v, el('details', { class: 'note' }, el('summary', {}, 'Earlier context was compacted into a recap'),
        el('pre', {}, JSON.stringify(e, null, 2))), stored.seq);
    case 'context_rewound':
      return row(v, el('p', { class: 'note' }, 'The context was rewound.'), stored.seq);
    case 'model_changed':
      return row(v, el('p', { class: 'note' }, e.model ? `Model from here on: ${e.model.provider}/${e.model.model}` : 'Model from here on: the configured one'), stored.seq);
    case 'sandbox_changed': {
      const parts = [e.mode, e.network === undefined ? undefined : `network ${e.network ? 'on' : 'off'}`].filter(Boolean);
      return row(v, el('p', { class: 'note' }, `Sandbox from here on: ${parts.join(', ')}`), stored.seq);
    }
    case 'status_changed':
    case 'plan_updated':
      return null;
    default:
      return row(v, el('p', { class: 'note' }, `(${e.type})`), stored.seq);
  }
}

function appendMessage(v, stored) {
  const e = stored.event;
  const meta = e.meta || {};
  if (meta.projectionOf) {
    const item = projectionCard(v, e);
    item.dataset.seq = stored.seq;
    return item;
  }
  if (e.role === 'assistant') {
    v.dom.live.querySelector('.live-text')?.remove();
    if (!e.content) return null;
    // An answer cut short by a cancel says so, as `seri thread` does.
    const cut = meta.interrupted
      ? el('p', { class: 'chip interrupted', title: 'The turn was cancelled while this answer was being written' }, 'Interrupted')
      : null;
    return row(v, el('div', { class: 'msg assistant' }, markdown(e.content), cut), stored.seq);
  }
  if (e.actor === 'system') {
    const what = meta.rule ? `Rule ${meta.rule}` : 'System note';
    return row(v, el('details', { class: 'note system' }, el('summary', {}, what), el('pre', {}, e.content)), stored.seq);
  }
  const from = meta.continuedFrom;
  return row(v, el('div', { class: `msg user${e.actor === 'trigger' ? ' trigger' : ''}` },
    from ? el('button', { type: 'button', class: 'chip from-previous', title: 'Open the session this message was first sent in', onclick: () => actions.navigate(from.sessionId) }, 'From previous session') : null,
    e.actor === 'trigger' ? el('span', { class: 'chip' }, 'Automation') : null,
    el('div', { class: 'text' }, e.content),
    (e.attachments || []).length
      ? el('div', { class: 'attachments' }, e.attachments.map((a) => el('span', { class: 'chip attachment', title: `attachment:${a.id}` }, a.name)))
      : null,
    el('button', { type: 'button', class: 'fork-here', title: 'A new session sharing everything before this message, with the message ready to edit', onclick: () => actions.forkFrom(v, stored.seq, e.content) }, 'Fork from here')), stored.seq);
}

/**
 * The transition card of a `continue_session` call: while it runs, what
 * the call asks for (its title and reason arguments); once it continued,
 * the edge (successor, reason, handoff, sources); refused, the error.
 */
function drawTransition(v, callId, result) {
  const known = v.calls.get(callId);
  if (result) known.result = result;
  const { call } = known;
  const args = call.arguments && typeof call.arguments === 'object' ? call.arguments : {};
  const draw = (found) => {
    if (v.closed) return;
    const title = found ? successorTitle(v, found) : typeof args.title === 'string' ? args.title : '';
    const reason = found ? found.reason : args.reason;
    const body = found ? edgeHandoff(found) : el('p', { class: 'muted' }, known.result ? 'Loading the handoff…' : 'The handoff is being written.');
    const bubble = found
      ? el('div', {}, facts([['Title', title], ['Description', found.description], ['Reason', reasonText(found.reason)]]), edgeHandoff(found))
      : null;
    known.holder.replaceChildren(transitionCard({
      bubble,
      call,
      result: known.result,
      title,
      reason,
      body,
      onOpen: found ? () => actions.navigate(found.successorSessionId) : null,
      onInfo: () => transitionDetails(v, known, found),
    }));
  };
  draw(known.edge || null);
  if (known.result && !known.result.isError && !known.edge) {
    edgeOfCall(v, callId).then((found) => {
      if (!found) return;
      known.edge = found;
      draw(found);
    });
  }
}

/**
 * The successor's handoff card, in place of the projection message the
 * model read: drawn from the edge the message projects (its reason, the
 * handoff as the runtime parsed it, the manifest's sources), never from
 * the message's text.
 */
function projectionCard(v, message) {
  const continuationId = message.meta.projectionOf;
  const from = v.info.continuedFrom;
  const body = el('div', { class: 'handoff-holder' }, el('p', { class: 'muted' }, 'Loading the handoff…'));
  const bubble = el('div', { class: 'handoff-holder' }, el('p', { class: 'muted' }, 'Loading…'));
  const card = handoffCard({
    bubble,
    title: from ? from.title : '',
    reason: from ? from.reason : null,
    body,
    onOpen: () => (from ? actions.navigate(from.sessionId) : edge(v, continuationId).then((e) => actions.navigate(e.predecessorSessionId))),
    onInfo: () => handoffDetails(v, message),
  });
  edge(v, continuationId).then((found) => {
    body.replaceChildren(edgeHandoff(found));
    bubble.replaceChildren(facts([['From', `${quoted(from ? from.title : '')} ${found.predecessorSessionId}`], ['Reason', reasonText(found.reason)]]), edgeHandoff(found));
  }, (e) => {
    body.replaceChildren(el('p', { class: 'problem' }, `Cannot load the handoff: ${e.message}`));
  });
  return row(v, card, null);
}
