// The web UI: a session list and one session at a time, drawn from the
// API's durable state and kept live by the WebSocket. A reload draws the
// same thing: nothing here is known only to this page but what it is
// doing now (a streaming answer, a question waiting for a click).
//
// This file is the page's wiring: routing, the socket, the list and the
// search box, the drawers and keys, and opening a session. What a session
// draws lives beside it: transcript.js (its events), live.js (what runs
// now, and the composer), dialogs.js and edges.js (continuations), with
// what they share in page.js.

import { allEvents, api, Socket } from './api.js';
import { reasonLabel } from './handoff.js';
import { addFiles, cancel, drawRunState, onRunEvent, send, showApproval } from './live.js';
import { $, actions, fill, following, listed, WINDOW } from './page.js';
import { contextMeter, el, meterLabel, quoted, relativeTime } from './render.js';
import { RunState } from './runstate.js';
import { hitItem, hitsLine, seqOfHash } from './search.js';
import { appendEvent, drawEarlierButton, row, showEvent } from './transcript.js';

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
    case 'resync':
      // This page fell behind and frames were left out for it: read again
      // what they were about, as after a reconnect.
      if (frame.account) refreshList();
      if (view && frame.sessionId === view.id) {
        resync(view);
        refresh(view);
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
      listed.sessions = all;
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
  const byId = new Map(listed.sessions.map((s) => [s.id, s]));
  const children = new Map();
  const roots = [];
  for (const s of listed.sessions) {
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


$('details-close').addEventListener('click', () => $('details').close());

Object.assign(actions, { navigate, openSession, pathSession, refresh, refreshList, forkFrom });
openSession(pathSession());
refreshList();