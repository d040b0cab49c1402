// What runs now: the run state, streamed text and tool rows, questions
// waiting for a click, and the composer (files, send, cancel).

import { answerLost, api, newKey, retryPause, SEND_ATTEMPTS } from './api.js';
import { actions, atBottom, following, scrollDown } from './page.js';
import { diffBlock, el, markdown } from './render.js';

/**
 * Draws what the runs are doing, from the run state alone: the status
 * line (`Working…`, `Running bash…`, `Waiting for you: …`, or how the last
 * run ended), Cancel while something runs, and the status panel's line.
 */
export function drawRunState(v) {
  if (v.closed) return;
  const label = v.run.label;
  v.dom.status.textContent = label || v.ended;
  v.dom.status.dataset.phase = v.run.phase;
  v.dom.cancelButton.hidden = !v.run.active;
  const line = v.dom.assistant && v.dom.assistant.querySelector('.panel-run');
  if (line) {
    line.textContent = label || 'Idle';
    line.dataset.phase = v.run.phase;
  }
}

function liveNode(v, cls, make) {
  let node = v.dom.live.querySelector(`.${cls}`);
  if (!node) {
    node = make();
    v.dom.live.append(node);
  }
  return node;
}

export function onRunEvent(v, frame) {
  following.runEvent(v.follow, frame.runId, frame.event);
  v.run.event(frame.runId, frame.event);
  const e = frame.event || {};
  if (e.type === 'run_started') {
    v.ended = '';
    // What is still drawn live belongs to a run that ended: cancelled, or
    // one whose server stopped (the store said so, or will).
    v.dom.live.querySelector('.live-text')?.remove();
    v.dom.live.querySelector('.live-thinking')?.remove();
  }
  switch (e.type) {
    case 'text_delta': {
      const follow = atBottom(v);
      const node = liveNode(v, 'live-text', () => el('div', { class: 'msg assistant live-text' }, el('div', { class: 'markdown' })));
      node.dataset.text = (node.dataset.text || '') + e.text;
      node.replaceChildren(markdown(node.dataset.text));
      if (follow) scrollDown(v);
      break;
    }
    case 'thinking_delta': {
      const node = liveNode(v, 'live-thinking', () => el('details', { class: 'thinking live-thinking' }, el('summary', {}, 'Thinking…'), el('pre')));
      node.querySelector('pre').textContent += e.text;
      break;
    }
    case 'retrying':
      v.ended = `The model failed (${e.error}); trying again (${e.attempt} of ${e.max_attempts}).`;
      break;
    case 'compaction_failed':
      v.ended = `Compaction failed: ${e.error}`;
      break;
    case 'continued': {
      // The turn this page watched continued: follow it (the info naming
      // the successor may have come first).
      const step = following.decide(v.follow, { continuedTo: { sessionId: e.session_id } });
      if (step && step.move) {
        actions.navigate(step.move);
        return;
      }
      break;
    }
    case 'run_finished': {
      // A run whose server stopped before it finished, told by the store
      // once another server took its session over (perhaps after that one
      // answered): it runs no more, and says nothing of how the message
      // fared. What it drew live is marked, unless a run goes on now.
      if (e.status === 'interrupted') {
        if (!v.run.active) {
          v.dom.live.querySelector('.live-thinking')?.remove();
          const left = v.dom.live.querySelector('.live-text:not(.interrupted)');
          left?.classList.add('interrupted');
          left?.append(el('p', { class: 'muted' }, 'Interrupted.'));
        }
        actions.refresh(v);
        break;
      }
      v.ended = e.status === 'succeeded' ? '' : e.status === 'cancelled' ? 'Cancelled.' : `The run ended: ${e.status}${e.error ? `: ${e.error}` : ''}`;
      v.dom.live.querySelector('.live-thinking')?.remove();
      // A cancelled answer stays on screen, marked, until the stored one
      // (or the next run) replaces it; any other ends with its message.
      const partial = v.dom.live.querySelector('.live-text');
      if (partial && e.status === 'cancelled') {
        partial.classList.add('interrupted');
        partial.append(el('p', { class: 'muted' }, 'Interrupted.'));
      } else if (partial) {
        partial.remove();
      }
      actions.refresh(v);
      break;
    }
    default:
      break;
  }
  drawRunState(v);
}

/** The largest file the server takes (20 MiB), checked before reading it. */
const MAX_ATTACHMENT = 20 * 1024 * 1024;

export function addFiles(v, files) {
  for (const file of files) {
    if (file.size > MAX_ATTACHMENT) {
      v.ended = `${file.name} is over 20 MiB; it was not attached.`;
      drawRunState(v);
      continue;
    }
    v.files.push(file);
  }
  drawChips(v);
}

function drawChips(v) {
  v.dom.chips.replaceChildren(...v.files.map((file, i) => el('span', { class: 'chip attachment' }, file.name, ' ',
    el('button', { type: 'button', class: 'link', 'aria-label': `Remove ${file.name}`, onclick: () => { v.files.splice(i, 1); drawChips(v); } }, '×'))));
}

/** A file as the API takes it: its name, base64 bytes and media type. */
function encodeFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({ name: file.name || 'pasted', data: String(reader.result).replace(/^data:[^,]*,/, ''), ...(file.type ? { mediaType: file.type } : {}) });
    reader.onerror = () => reject(new Error(`cannot read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/** The same files, in the same order (the very `File`s of a draft given back; its chips change `v.files` in place). */
function sameFiles(a, b) {
  return a.length === b.length && a.every((file, i) => file === b[i]);
}

export async function send(v) {
  const textarea = v.dom.textarea;
  const text = textarea.value;
  if (!text.trim()) return;
  let attachments;
  try {
    attachments = await Promise.all(v.files.map(encodeFile));
  } catch (e) {
    v.ended = `Not sent: ${e.message}`;
    drawRunState(v);
    return;
  }
  const files = v.files;
  // One key per message: while its answer is lost (the server went away
  // under the request), the message is posted again with it, and the
  // server answers the first post instead of taking a second message. A
  // draft given back after a lost answer keeps its key while it is sent
  // unchanged, so sending it by hand is not a second message either.
  const lost = v.lostDraft;
  const key = lost && lost.text === text && sameFiles(lost.files, files) ? lost.key : newKey();
  v.lostDraft = null;
  v.files = [];
  drawChips(v);
  textarea.value = '';
  v.ended = '';
  v.run.sending = true;
  drawRunState(v);
  try {
    let answer;
    for (let attempt = 1; ; attempt++) {
      try {
        answer = await api.send(v.id, text, attachments, key);
        break;
      } catch (e) {
        if (v.closed || !answerLost(e) || attempt >= SEND_ATTEMPTS) throw e;
        await new Promise((resolve) => setTimeout(resolve, retryPause(attempt)));
        if (v.closed) return;
      }
    }
    if (v.closed) return;
    const step = following.answered(v.follow, answer.continuedToSessionId);
    if (step) {
      actions.navigate(step.move);
      return;
    }
    if (answer.blockedByHook) {
      // Nothing was recorded: the words come back to be changed and sent again.
      if (!textarea.value) textarea.value = text;
      v.ended = `A UserPromptSubmit hook blocked this message; it was not sent. The hook said:\n${answer.blockedByHook}`;
    } else if (answer.status !== 'succeeded' && !v.run.finished.has(answer.runId)) {
      // The run's own last frame says it more precisely (`cancelled`).
      v.ended = answer.status === 'cancelled' ? 'Cancelled.' : `The run ended: ${answer.status}${answer.error ? `: ${answer.error}` : ''}`;
    }
  } catch (e) {
    if (v.closed) return;
    if (!textarea.value) textarea.value = text;
    if (!v.files.length) {
      v.files = files;
      drawChips(v);
    }
    if (answerLost(e)) {
      // Perhaps taken, perhaps not: its answer, if any, appears here.
      if (textarea.value === text && v.files === files) v.lostDraft = { text, files: [...files], key };
      v.ended = `No answer from the server (${e.message}): the message may still be answered. Sending it again unchanged does not send it twice.`;
    } else {
      v.ended = `Not sent: ${e.message}`;
    }
  } finally {
    v.run.sending = false;
    drawRunState(v);
  }
  actions.refresh(v);
}

export async function cancel(v) {
  try {
    await api.cancel(v.id);
  } catch (e) {
    v.ended = `Cannot cancel: ${e.message}`;
    drawRunState(v);
  }
}

// ------------------------------------------------------------ approvals

export function showApproval(v, frame) {
  if (v.approvals.has(frame.callId)) return;
  const answered = el('p', { class: 'answered', role: 'status' });
  const buttons = el('div', { class: 'approval-actions' });
  const answer = async (allow, remember, words) => {
    for (const b of buttons.querySelectorAll('button, input')) b.disabled = true;
    try {
      const reply = await api.answer(frame.runId, frame.callId, allow, remember, words);
      answered.textContent = reply.answered ? (allow ? 'Allowed.' : words ? `Denied: “${words}”.` : 'Denied.') : 'Already answered.';
      v.run.settled(frame.callId);
    } catch (e) {
      answered.textContent = e.status === 404 ? 'Already answered.' : `Cannot answer: ${e.message}`;
      if (e.status === 404) v.run.settled(frame.callId);
    }
    buttons.remove();
    drawRunState(v);
  };
  const instead = el('input', { type: 'text', class: 'instead', 'aria-label': 'Or say what to do instead', placeholder: 'Or say what to do instead…' });
  instead.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && instead.value.trim()) {
      e.preventDefault();
      answer(false, null, instead.value.trim());
    }
  });
  buttons.append(
    el('button', { type: 'button', class: 'button primary', onclick: () => answer(true) }, 'Allow'),
    el('button', { type: 'button', class: 'button', onclick: () => answer(true, 'session'), title: `Allow ${frame.tool} for the rest of this session` }, 'Allow for this session'),
    el('button', { type: 'button', class: 'button danger', onclick: () => answer(false, null, instead.value.trim() || null) }, 'Deny'),
    instead);
  const card = el('div', { class: 'approval', role: 'group', 'aria-label': `${frame.tool} asks to run`, 'data-call': frame.callId },
    el('p', {}, el('strong', {}, frame.tool), ' asks to run: ', el('code', {}, frame.summary)),
    frame.preview ? diffBlock(frame.preview, 'preview diff') : null,
    buttons, answered);
  v.approvals.set(frame.callId, { card, buttons, answered });
  const follow = atBottom(v);
  const known = v.calls.get(frame.callId);
  const anchor = known && (known.node || known.holder);
  if (anchor && anchor.parentElement) anchor.closest('li').after(el('li', { class: 'event' }, card));
  else v.dom.live.append(card);
  if (follow) scrollDown(v);
}

/** The call has a result: its question, if any, was answered (here or elsewhere). */
export function settleApproval(v, callId) {
  v.run.settled(callId);
  drawRunState(v);
  const waiting = v.approvals.get(callId);
  if (!waiting || !waiting.buttons.isConnected) return;
  waiting.buttons.remove();
  waiting.answered.textContent = 'Answered.';
}
