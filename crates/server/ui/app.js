// The web UI: a session list and one session at a time, drawn from the
// API's durable state and kept live by the WebSocket. A reload draws the
// same thing: nothing here is known only to this page but what it is
// doing now (a streaming answer, a question waiting for a click).

import { api, allEvents, answerLost, newKey, retryPause, SEND_ATTEMPTS, Socket } from './api.js';
import { Following } from './follow.js';
import { handoffSections, manifestRanges, reasonLabel, sourceLine } from './handoff.js';
import {
  contextMeter, diffBlock, el, handoffBody, handoffCard, markdown, meterLabel, quoted, rangeList, relativeTime, toolRow,
  transitionCard,
} from './render.js';
import { RunState } from './runstate.js';
import { hitItem, hitsLine, seqOfHash } from './search.js';

const following = new Following();
/** The session list, newest first, as the API answers it. */
let sessions = [];
/** Sessions per page of the list. */
const PAGE = 100;
/** How many pages the person has asked to see. */
let pages = 1;
/** Whether the last page was full, so there may be older sessions. */
let more = false;
/** The session on screen, or null. */
let view = null;
/** Put the cursor in the composer of the next session opened (a new one). */
let focusComposer = false;
/**
 * How many of a session's newest events are drawn at first; earlier ones
 * come on request, so a long session opens as fast as a short one.
 * `?window=N` in the address changes it.
 */
const WINDOW = Number(new URLSearchParams(window.location.search).get('window')) || 400;

const $ = (id) => document.getElementById(id);

/** `node.replaceChildren`, leaving out the parts that are not there. */
function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
}

// A fault of the page itself is said on the page, not only in a console.
function pageFault(message) {
  document.body.dataset.fault = message;
  const main = $('session');
  if (main && !main.querySelector('.page-fault')) {
    main.prepend(el('p', { class: 'problem page-fault', role: 'alert' }, `The page hit a fault: ${message}. Reloading may help.`));
  }
}
window.addEventListener('error', (e) => pageFault(e.message));
window.addEventListener('unhandledrejection', (e) => pageFault(String(e.reason && e.reason.message || e.reason)));

// ---------------------------------------------------------------- routing

function pathSession() {
  const match = window.location.pathname.match(/^\/s\/([^/]+)$/);
  return match ? decodeURIComponent(match[1]) : null;
}

/**
 * A message waiting to be edited and sent again in a fork just made
 * ("Fork from here"): put in the fork's composer once it is on screen.
 */
let pendingDraft = null;

/** Forks the session before the message at `seq` and opens the fork with that message in the composer. */
async function forkFrom(v, seq, text) {
  try {
    const forked = await api.fork(v.id, seq - 1);
    pendingDraft = { sessionId: forked.session.id, text };
    navigate(forked.session.id);
  } catch (e) {
    alertProblem(`Cannot fork here: ${e.message}`);
  }
}

/** Opens session `id` (none: the empty page); with `seq`, scrolled to that event (`#seq-N`). */
function navigate(id, seq = null) {
  const path = id ? `/s/${encodeURIComponent(id)}${seq ? `#seq-${seq}` : ''}` : '/';
  if (window.location.pathname + window.location.hash !== path) window.history.pushState({}, '', path);
  openSession(id);
}

window.addEventListener('popstate', () => openSession(pathSession()));

// ------------------------------------------------------------- the socket

/** Whether the socket has been open before: a later open is a reconnect. */
let connected = false;

const socket = new Socket(onFrame, () => {
  socket.send({ type: 'subscribe', account: true });
  if (view) {
    socket.send({ type: 'subscribe', sessionId: view.id });
    if (connected) resync(view);
    refresh(view);
  }
  connected = true;
  refreshList();
});

/**
 * After a reconnect, frames may have been missed (a run's end among
 * them), and no stored event says a run ended: the run state starts over
 * from the questions waiting now and the frames that come, rather than
 * going on saying a run runs that may have ended.
 */
async function resync(v) {
  v.run = new RunState();
  drawRunState(v);
  try {
    for (const frame of (await api.approvals(v.id)).approvals) {
      v.run.asked(frame);
      showApproval(v, frame);
    }
  } catch { /* the frames will tell */ }
  drawRunState(v);
}

function onFrame(frame) {
  switch (frame.type) {
    case 'account-change':
      refreshList();
      break;
    case 'session-change': {
      refreshList();
      // `updateInfo` may move this page to a successor, which replaces
      // `view`: what follows works on the session the frame was about.
      const v = view;
      if (v && frame.sessionId === v.id) {
        // The context usage is the server's figure, given with the session:
        // asked again when what it is computed from changed.
        const same = (key) => JSON.stringify(frame.session[key]) === JSON.stringify(v.info[key]);
        const usage = !same('lastUsage') || !same('messageCounts') || !same('lastUsageModel');
        updateInfo(v, frame.session);
        if (!v.closed) refresh(v, usage);
      }
      break;
    }
    case 'run-event':
      if (view && frame.sessionId === view.id) onRunEvent(view, frame);
      break;
    case 'approval-requested':
      if (view && frame.sessionId === view.id) {
        view.run.asked(frame);
        showApproval(view, frame);
        drawRunState(view);
      }
      break;
    case 'subscribed':
      // Frames flow from here on: load what happened before they did.
      if (view && frame.sessionId === view.id) refresh(view);
      break;
    default:
      break;
  }
}

// ----------------------------------------------------------- the list

let listTimer = null;

function refreshList() {
  if (listTimer) return;
  listTimer = setTimeout(async () => {
    listTimer = null;
    try {
      // The newest pages again, so changes anywhere in them show.
      const all = [];
      let before = null;
      for (let page = 0; page < pages; page++) {
        const batch = (await api.sessions(PAGE, before)).sessions;
        all.push(...batch);
        more = batch.length === PAGE;
        if (!more) break;
        before = batch[batch.length - 1];
      }
      sessions = all;
      renderList();
    } catch (e) {
      $('session-list').replaceChildren(el('li', { class: 'problem', role: 'alert' }, `Cannot list sessions: ${e.message}`));
    }
  }, 150);
}

function shortCwd(cwd) {
  const parts = (cwd || '').split('/').filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join('/')}` : cwd;
}

// ------------------------------------------------------------- search

/** The query whose hits are on screen (or asked for), so a late answer to an older one is dropped. */
let searched = '';
let searchTimer = null;

async function search(query) {
  query = query.trim();
  searched = query;
  const hits = $('search-hits');
  const status = $('search-status');
  if (!query) {
    hits.hidden = true;
    hits.replaceChildren();
    status.textContent = '';
    return;
  }
  let answer;
  try {
    answer = await api.search(query);
  } catch (e) {
    if (searched !== query) return;
    hits.hidden = true;
    hits.replaceChildren();
    status.textContent = e.code === 'bad_query' ? e.message.replace(/^q: /, 'Cannot search: ') : `Cannot search: ${e.message}`;
    return;
  }
  if (searched !== query) return;
  status.textContent = hitsLine(query, answer.hits);
  const open = (hit) => { closeDrawers(); navigate(hit.sessionId, hit.seq); };
  hits.replaceChildren(...answer.hits.map((hit) => hitItem(hit, open, shortCwd)));
  hits.hidden = !answer.hits.length;
}

$('search').addEventListener('submit', (e) => {
  e.preventDefault();
  clearTimeout(searchTimer);
  search($('search-input').value);
});
// Typing searches too, once the words settle.
$('search-input').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => search($('search-input').value), 300);
});
// ↓ from the box moves to the hits; ↑ ↓ move among them, ↑ from the first
// goes back; Esc in the box clears it (and keeps a drawer open).
$('search-input').addEventListener('keydown', (e) => {
  if (e.key === 'ArrowDown') {
    const first = document.querySelector('#search-hits a');
    if (first) { e.preventDefault(); first.focus(); }
  } else if (e.key === 'Escape' && $('search-input').value) {
    e.preventDefault();
    e.stopPropagation();
    $('search-input').value = '';
    clearTimeout(searchTimer);
    search('');
  }
});
$('search-hits').addEventListener('keydown', (e) => {
  const links = [...document.querySelectorAll('#search-hits a')];
  const at = links.indexOf(document.activeElement);
  if (at < 0 || e.altKey || e.ctrlKey || e.metaKey) return;
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: links.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  if (to < 0) $('search-input').focus();
  else links[Math.min(links.length - 1, to)].focus();
});

function renderList() {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const children = new Map();
  const roots = [];
  for (const s of sessions) {
    if (s.parentSessionId && byId.has(s.parentSessionId)) {
      if (!children.has(s.parentSessionId)) children.set(s.parentSessionId, []);
      children.get(s.parentSessionId).push(s);
    } else {
      roots.push(s);
    }
  }
  const item = (s) => {
    const current = view && view.id === s.id;
    const kids = children.get(s.id) || [];
    return el('li', { class: `session-item${current ? ' current' : ''}`, 'data-session': s.id },
      el('a', { href: `/s/${encodeURIComponent(s.id)}`, 'aria-current': current ? 'page' : null, onclick: (e) => { e.preventDefault(); closeDrawers(); navigate(s.id); } },
        el('span', { class: 'item-title' }, s.title || 'Untitled'),
        s.parentRunId ? el('span', { class: 'chip child', title: 'Started by a delegation from another session' }, 'Child session') : null,
        s.description ? el('span', { class: 'item-description' }, s.description) : null,
        el('span', { class: 'item-meta' },
          el('time', { datetime: s.updatedAt, title: s.updatedAt }, relativeTime(s.updatedAt)), ' · ',
          el('span', { class: 'cwd', title: s.cwd }, shortCwd(s.cwd))),
        s.continuedTo ? el('span', { class: 'chip continued' }, `Continued in ${quoted(s.continuedTo.title)}`) : null,
        s.forkedFrom ? el('span', { class: 'chip forked' }, `Forked at [${s.forkedFrom.forkSeq}]`) : null),
      kids.length ? el('ul', { class: 'children', 'aria-label': 'Child sessions' }, kids.map(item)) : null);
  };
  const older = more
    ? el('li', {}, el('button', { type: 'button', class: 'link older', onclick: () => { pages += 1; refreshList(); } }, 'Older sessions…'))
    : null;
  fill($('session-list'), ...(roots.length ? roots.map(item) : [el('li', { class: 'muted' }, 'No sessions yet.')]), older);
}

// Relative times age.
setInterval(renderList, 30000);

$('new-session').addEventListener('click', async () => {
  try {
    const created = await api.createSession();
    focusComposer = true;
    closeDrawers();
    navigate(created.session.id);
  } catch (e) {
    alertProblem(`Cannot start a session: ${e.message}`);
  }
});

/** The session links of the list, in the order they are drawn. */
function listLinks() {
  return [...document.querySelectorAll('#session-list .session-item > a')];
}

// Keyboard: ↑ and ↓ (Home, End) move between the sessions of the list;
// Enter opens the one focused, as a link does.
$('session-list').addEventListener('keydown', (e) => {
  const links = listLinks();
  const at = links.indexOf(document.activeElement);
  if (at < 0 || e.altKey || e.ctrlKey || e.metaKey) return;
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: links.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  links[Math.max(0, Math.min(links.length - 1, to))].focus();
});

/** Opens the session `step` places after (1) or before (-1) the one on screen, in the list's order. */
function openNeighbour(step) {
  const ids = listLinks().map((a) => a.closest('.session-item').dataset.session);
  if (!ids.length) return;
  // The session asked for, even while it is still loading.
  const at = ids.indexOf(pathSession());
  const to = at < 0 ? (step > 0 ? 0 : ids.length - 1) : at + step;
  if (to < 0 || to >= ids.length) return;
  navigate(ids[to]);
  document.querySelector(`#session-list [data-session="${CSS.escape(ids[to])}"] > a`)?.focus();
}

// ------------------------------------------------------------ drawers

/**
 * On a narrow screen the session list and the session's status are
 * drawers, opened by the top bar's buttons and closed by Close, the scrim,
 * Esc, or choosing a session.
 */
function setDrawer(id, open) {
  const drawer = $(id);
  drawer.classList.toggle('open', open);
  const toggle = document.querySelector(`[aria-controls="${id}"]`);
  if (toggle) toggle.setAttribute('aria-expanded', String(open));
  $('scrim').hidden = !document.querySelector('.drawer.open');
  if (open) drawer.querySelector('button, a, [tabindex]')?.focus();
  else if (toggle && drawer.contains(document.activeElement)) toggle.focus();
}

function closeDrawers() {
  for (const drawer of document.querySelectorAll('.drawer.open')) setDrawer(drawer.id, false);
}

$('open-sessions').addEventListener('click', () => setDrawer('sessions', !$('sessions').classList.contains('open')));
$('open-assistant').addEventListener('click', () => setDrawer('assistant', !$('assistant').classList.contains('open')));
$('scrim').addEventListener('click', closeDrawers);
document.addEventListener('click', (e) => {
  const close = e.target.closest && e.target.closest('[data-close]');
  if (close) setDrawer(close.dataset.close, false);
});

// Keys everywhere: Esc closes what is open (a dialog closes itself), else
// cancels the run; Alt+↑ and Alt+↓ open the previous and next session.
document.addEventListener('keydown', (e) => {
  if (e.isComposing) return;
  if (e.key === 'Escape') {
    if ($('details').open) return;
    if (document.querySelector('.drawer.open')) {
      e.preventDefault();
      closeDrawers();
      return;
    }
    if (view && view.run.active) {
      e.preventDefault();
      cancel(view);
    }
    return;
  }
  if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
    e.preventDefault();
    openNeighbour(e.key === 'ArrowDown' ? 1 : -1);
  }
});

function alertProblem(text) {
  const main = $('session');
  main.prepend(el('p', { class: 'problem', role: 'alert' }, text));
}

// -------------------------------------------------------- one session

async function openSession(id) {
  if (view) {
    socket.send({ type: 'unsubscribe', sessionId: view.id });
    view.closed = true;
    view = null;
  }
  const main = $('session');
  const assistant = $('assistant');
  if (!id) {
    main.replaceChildren(el('h1', { class: 'visually-hidden' }, 'seri'), el('p', { class: 'empty' }, 'Pick a session, or start a new one.'));
    assistant.hidden = true;
    assistant.replaceChildren();
    $('open-assistant').hidden = true;
    renderList();
    return;
  }
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  let answer;
  try {
    answer = await api.session(id);
  } catch (e) {
    main.replaceChildren(el('p', { class: 'problem', role: 'alert' }, e.status === 404 ? `No session ${id}.` : e.message));
    return;
  }
  // An address naming an event (a search hit's, `#seq-N`) draws from a little before it at least.
  const target = pathSession() === id ? seqOfHash(window.location.hash) : null;
  const newest = Math.max(1, (answer.session.lastSeq || 0) - WINDOW + 1);
  const start = target ? Math.max(1, Math.min(newest, target - 10)) : newest;
  const v = {
    id,
    start,
    info: answer.session,
    usage: answer.contextUsage,
    follow: following.open(answer.session),
    run: new RunState(),
    /** How the newest run this page saw ended, when not as it should: shown under the transcript. */
    ended: '',
    lastSeq: start - 1,
    calls: new Map(),
    approvals: new Map(),
    /** Continuation edges of this session as predecessor, by id, as `GET /api/continuations/{id}` answers. */
    edges: new Map(),
    closed: false,
    /** A draft given back after its send's answer was lost, with its key: `{text, files, key}`. */
    lostDraft: null,
    busy: null,
    again: false,
    dom: {},
  };
  view = v;
  buildSession(v, main);
  drawEarlierButton(v);
  socket.send({ type: 'subscribe', sessionId: id });
  renderList();
  await refresh(v);
  if (target && !v.closed) showEvent(v, target);
  try {
    for (const frame of (await api.approvals(id)).approvals) {
      v.run.asked(frame);
      showApproval(v, frame);
    }
    drawRunState(v);
  } catch { /* the frames will tell */ }
}

function buildSession(v, main) {
  const textarea = el('textarea', { id: 'composer-input', rows: 3, 'aria-label': 'Message', placeholder: 'Message (Enter sends, Shift+Enter for a new line)' });
  const sendButton = el('button', { type: 'submit', class: 'button primary' }, 'Send');
  const cancelButton = el('button', { type: 'button', class: 'button danger', id: 'cancel', hidden: true, onclick: () => cancel(v) }, 'Cancel');
  const picker = el('input', { type: 'file', multiple: true, class: 'visually-hidden', tabindex: -1, id: 'attach-input', 'aria-label': 'Files to attach' });
  const attachButton = el('button', { type: 'button', class: 'button', id: 'attach', title: 'Attach files (or paste a picture)', onclick: () => picker.click() }, 'Attach');
  const chips = el('div', { class: 'attachments', 'aria-label': 'Attached files' });
  picker.addEventListener('change', () => {
    addFiles(v, [...picker.files]);
    picker.value = '';
  });
  textarea.addEventListener('paste', (e) => {
    const files = [...(e.clipboardData ? e.clipboardData.files : [])];
    if (files.length) {
      e.preventDefault();
      addFiles(v, files);
    }
  });
  const form = el('form', { class: 'composer', onsubmit: (e) => { e.preventDefault(); send(v); } },
    chips, textarea,
    el('div', { class: 'composer-actions' }, el('span', { class: 'composer-hint', id: 'composer-hint' }), picker, attachButton, cancelButton, sendButton));
  textarea.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send(v);
    }
  });
  cancelButton.title = 'Cancel the run (Esc)';
  cancelButton.setAttribute('aria-keyshortcuts', 'Escape');
  v.dom = {
    header: el('header', { class: 'session-head' }),
    notice: el('div', { class: 'notices', 'aria-live': 'polite' }),
    transcript: el('ol', { class: 'transcript', 'aria-label': 'Transcript' }),
    live: el('div', { class: 'live', 'aria-live': 'polite' }),
    status: el('p', { class: 'run-status', role: 'status', 'data-phase': 'idle' }),
    textarea,
    cancelButton,
    chips,
    hint: null,
  };
  v.files = [];
  v.dom.scroller = el('div', { class: 'scroll' }, v.dom.transcript, v.dom.live, v.dom.status);
  main.replaceChildren(v.dom.header, v.dom.notice, v.dom.scroller, form);
  v.dom.hint = form.querySelector('#composer-hint');
  v.dom.assistant = $('assistant');
  v.dom.assistant.hidden = false;
  $('open-assistant').hidden = false;
  renderHeader(v);
  drawRunState(v);
  if (pendingDraft && pendingDraft.sessionId === v.id) {
    textarea.value = pendingDraft.text;
    pendingDraft = null;
    textarea.focus();
    textarea.setSelectionRange(textarea.value.length, textarea.value.length);
  } else if (focusComposer) {
    textarea.focus();
  }
  focusComposer = false;
}

function renderHeader(v) {
  const info = v.info;
  const from = info.continuedFrom;
  const fork = info.forkedFrom;
  fill(v.dom.header,
    from
      ? el('button', { type: 'button', class: 'continuation-header', title: 'Back to the session this one continues', onclick: () => navigate(from.sessionId) },
        '← ', `Continued from ${quoted(from.title)}`)
      : null,
    fork
      ? el('button', { type: 'button', class: 'continuation-header fork-header', title: 'Open the session this one was forked from', onclick: () => navigate(fork.sessionId) },
        '⑂ ', `Forked from ${quoted(fork.title)} at [${fork.forkSeq}]`)
      : null,
    el('div', { class: 'head-row' },
      el('h1', {}, info.title || 'Untitled'),
      contextMeter(v.usage)),
    info.description ? el('p', { class: 'description' }, info.description) : null,
    el('p', { class: 'item-meta cwd-line' }, info.cwd));
  v.dom.hint.textContent = info.continuedTo
    ? `Continued in ${quoted(info.continuedTo.title)}: a message here branches this session.`
    : '';
  renderAssistant(v);
}

const STEP_MARKS = { done: ['✓', 'done'], in_progress: ['◐', 'in progress'], pending: ['○', 'pending'] };

/**
 * The assistant panel beside the transcript (a drawer on a phone): the
 * session's status (title, description, what its run is doing), its plan
 * and its context meter, all from the session's info, its usage as the
 * server computed it, and the run frames.
 */
function renderAssistant(v) {
  const info = v.info;
  const usage = v.usage;
  const steps = (info.plan && info.plan.steps) || [];
  const done = steps.filter((s) => s.status === 'done').length;
  v.dom.assistant.replaceChildren(
    el('header', { class: 'status-panel-head' },
      el('h2', {}, 'Status'),
      el('button', { type: 'button', class: 'button drawer-close', 'data-close': 'assistant', 'aria-label': 'Close the status panel' }, 'Close')),
    el('section', { class: 'panel-section', 'aria-labelledby': 'panel-session' },
      el('h3', { id: 'panel-session' }, 'Session'),
      el('p', { class: 'panel-title' }, info.title || 'Untitled'),
      info.description ? el('p', { class: 'panel-description' }, info.description) : el('p', { class: 'muted' }, 'No status yet.'),
      el('p', { class: 'panel-run', 'data-phase': v.run.phase }, v.run.label || 'Idle')),
    el('section', { class: 'panel-section', 'aria-labelledby': 'panel-context' },
      el('h3', { id: 'panel-context' }, 'Context'),
      usage
        ? el('div', { class: 'panel-meter' }, contextMeter(usage, 44), el('span', {}, meterLabel(usage).replace(/^Context: /, '')))
        : el('p', { class: 'muted' }, 'No measurement yet.')),
    el('section', { class: 'panel-section', 'aria-labelledby': 'panel-plan' },
      el('h3', { id: 'panel-plan' }, steps.length ? `Plan (${done} of ${steps.length} done)` : 'Plan'),
      steps.length
        ? el('ol', { class: 'plan' }, steps.map((step) => {
          const [mark, words] = STEP_MARKS[step.status] || STEP_MARKS.pending;
          return el('li', { class: `step ${step.status}` }, el('span', { class: 'step-mark', role: 'img', 'aria-label': words }, mark), ' ', step.text);
        }))
        : el('p', { class: 'muted' }, 'No plan.')));
}

/** New info for the session on screen: redraw the header, then follow or say so. */
function updateInfo(v, info) {
  if (v.closed) return;
  v.info = info;
  renderHeader(v);
  const step = following.decide(v.follow, info);
  if (step && step.move) navigate(step.move);
  else if (info.continuedTo) showNotice(v, info.continuedTo);
}

function showNotice(v, link) {
  if (v.dom.notice.dataset.successor === link.sessionId) return;
  v.dom.notice.dataset.successor = link.sessionId;
  v.dom.notice.replaceChildren(el('div', { class: 'notice', role: 'status' },
    `This session continued in ${quoted(link.title)}${reasonLabel(link.reason) ? ` (${reasonLabel(link.reason)})` : ''}. `,
    el('button', { type: 'button', class: 'button small', onclick: () => navigate(link.sessionId) }, 'Open session')));
}

/**
 * Loads what is new, one load at a time; a request during a load runs
 * once it ends. Events after the last drawn always; the session itself
 * (its info and context window) unless `withSession` is false, as when a
 * `session-change` frame just brought the info.
 */
async function refresh(v, withSession = true) {
  v.wantSession = v.wantSession || withSession;
  if (v.busy) {
    v.again = true;
    return v.busy;
  }
  v.busy = (async () => {
    do {
      v.again = false;
      const fetchSession = v.wantSession;
      v.wantSession = false;
      try {
        const [answer, events] = await Promise.all([fetchSession ? api.session(v.id) : null, allEvents(v.id, v.lastSeq + 1)]);
        if (v.closed) return;
        if (answer) {
          v.usage = answer.contextUsage;
          updateInfo(v, answer.session);
          if (v.closed) return;
        }
        for (const stored of events) {
          if (stored.seq <= v.lastSeq) continue;
          v.lastSeq = stored.seq;
          appendEvent(v, stored);
        }
      } catch (e) {
        if (!v.closed) {
          v.ended = `Cannot load the session: ${e.message}`;
          drawRunState(v);
        }
      }
    } while (v.again && !v.closed);
  })();
  try {
    await v.busy;
  } finally {
    v.busy = null;
  }
}

// ------------------------------------------------------- the transcript

/** Above a transcript that starts after seq 1: a button that draws it from earlier on. */
function drawEarlierButton(v) {
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
  await refresh(v);
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
function showEvent(v, seq) {
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

function row(v, node, seq) {
  const item = el('li', { class: 'event', 'data-seq': seq, id: seq ? `seq-${seq}` : null }, node);
  const follow = atBottom(v);
  v.dom.transcript.append(item);
  if (follow) scrollDown(v);
  return item;
}

/** Whether the transcript is scrolled to (near) its end: new text then keeps it there. */
function atBottom(v) {
  const scroller = v.dom.scroller;
  return !scroller || scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
}

function scrollDown(v) {
  if (v.dom.scroller) v.dom.scroller.scrollTop = v.dom.scroller.scrollHeight;
}

function appendEvent(v, stored) {
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
    return row(v, el('div', { class: 'msg assistant' }, markdown(e.content)), stored.seq);
  }
  if (e.actor === 'system') {
    const what = meta.rule ? `Rule ${meta.rule}` : 'System note';
    return row(v, el('details', { class: 'note system' }, el('summary', {}, what), el('pre', {}, e.content)), stored.seq);
  }
  const from = meta.continuedFrom;
  return row(v, el('div', { class: `msg user${e.actor === 'trigger' ? ' trigger' : ''}` },
    from ? el('button', { type: 'button', class: 'chip from-previous', title: 'Open the session this message was first sent in', onclick: () => navigate(from.sessionId) }, 'From previous session') : null,
    e.actor === 'trigger' ? el('span', { class: 'chip' }, 'Automation') : null,
    el('div', { class: 'text' }, e.content),
    (e.attachments || []).length
      ? el('div', { class: 'attachments' }, e.attachments.map((a) => el('span', { class: 'chip attachment', title: `attachment:${a.id}` }, a.name)))
      : null,
    el('button', { type: 'button', class: 'fork-here', title: 'A new session sharing everything before this message, with the message ready to edit', onclick: () => forkFrom(v, stored.seq, e.content) }, 'Fork from here')), stored.seq);
}

/** An edge, as `GET /api/continuations/{id}` answers it, loaded once per page. */
async function edge(v, id) {
  if (!v.edges.has(id)) {
    const loading = api.continuation(id);
    v.edges.set(id, loading);
    loading.catch(() => v.edges.delete(id));
  }
  return v.edges.get(id);
}

/**
 * The edge a `continue_session` call of this session made: among the
 * session's newest successor and the successors the list knows, the one
 * whose edge names the call. `null` when none does (yet).
 */
async function edgeOfCall(v, callId) {
  const ids = new Set();
  if (v.info.continuedTo) ids.add(v.info.continuedTo.continuationId);
  for (const s of sessions) if (s.continuedFrom && s.continuedFrom.sessionId === v.id) ids.add(s.continuedFrom.continuationId);
  for (const id of ids) {
    try {
      const found = await edge(v, id);
      if (found.toolCallId === callId) return found;
    } catch { /* not this one, or not now */ }
  }
  return null;
}

/** The successor's title as the page knows it now: its link, its list entry, else the edge's. */
function successorTitle(v, found) {
  const link = v.info.continuedTo;
  if (link && link.sessionId === found.successorSessionId) return link.title;
  const listed = sessions.find((s) => s.id === found.successorSessionId);
  return listed ? listed.title : found.title;
}

/** The handoff and its sources, drawn from an edge. */
function edgeHandoff(found) {
  return handoffBody(handoffSections(found.handoff), ((found.manifest && found.manifest.sources) || []).map(sourceLine));
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
      onOpen: found ? () => navigate(found.successorSessionId) : null,
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
    onOpen: () => (from ? navigate(from.sessionId) : edge(v, continuationId).then((e) => navigate(e.predecessorSessionId))),
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

// ---------------------------------------------------------- dialogs

function openDialog(title, ...body) {
  $('details-title').textContent = title;
  $('details-body').replaceChildren(...body);
  const dialog = $('details');
  if (!dialog.open) dialog.showModal();
}

$('details-close').addEventListener('click', () => $('details').close());

function reasonText(reason) {
  return reasonLabel(reason) ? `${reason} (${reasonLabel(reason)})` : reason;
}

function facts(pairs) {
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

async function transitionDetails(v, known, found) {
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

async function handoffDetails(v, message) {
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

// ------------------------------------------------------------ live runs

/**
 * Draws what the runs are doing, from the run state alone: the status
 * line (`Working…`, `Running bash…`, `Waiting for you: …`, or how the last
 * run ended), Cancel while something runs, and the status panel's line.
 */
function drawRunState(v) {
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

function onRunEvent(v, frame) {
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
        navigate(step.move);
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
        refresh(v);
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
      refresh(v);
      break;
    }
    default:
      break;
  }
  drawRunState(v);
}

/** The largest file the server takes (20 MiB), checked before reading it. */
const MAX_ATTACHMENT = 20 * 1024 * 1024;

function addFiles(v, files) {
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

async function send(v) {
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
      navigate(step.move);
      return;
    }
    // The run's own last frame says it more precisely (`cancelled`).
    if (answer.status !== 'succeeded' && !v.run.finished.has(answer.runId)) {
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
  refresh(v);
}

async function cancel(v) {
  try {
    await api.cancel(v.id);
  } catch (e) {
    v.ended = `Cannot cancel: ${e.message}`;
    drawRunState(v);
  }
}

// ------------------------------------------------------------ approvals

function showApproval(v, frame) {
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
function settleApproval(v, callId) {
  v.run.settled(callId);
  drawRunState(v);
  const waiting = v.approvals.get(callId);
  if (!waiting || !waiting.buttons.isConnected) return;
  waiting.buttons.remove();
  waiting.answered.textContent = 'Answered.';
}

openSession(pathSession());
refreshList();
