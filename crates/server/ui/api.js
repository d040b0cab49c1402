// The server's API as the page uses it: JSON over fetch (the sign-in
// cookie rides along; the page never sees the token) and one WebSocket
// that re-subscribes after a reconnect.

/** An error answer of the API: `{"error": {"code", "message"}}`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, body, headers = {}) {
  const init = { method, headers: { ...headers }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'unreachable', `the server did not answer: ${e.message}`);
  }
  if (response.status === 401) {
    // Signed out elsewhere, or the token was revoked: back to the form.
    window.location.assign('/');
    throw new ApiError(401, 'unauthorized', 'signed out');
  }
  let text;
  try {
    text = await response.text();
  } catch (e) {
    // The connection broke inside the answer: as lost as no answer at all.
    throw new ApiError(0, 'unreachable', `the server's answer was cut off: ${e.message}`);
  }
  let json = null;
  if (text && (response.headers.get('content-type') || '').includes('json')) {
    try { json = JSON.parse(text); } catch { json = null; }
  }
  if (!response.ok) {
    const error = json && json.error;
    throw new ApiError(response.status, error ? error.code : 'http', error ? error.message : `${response.status} ${text}`);
  }
  return json ?? text;
}

const enc = encodeURIComponent;

/** A fresh idempotency key: a UUID (`crypto.randomUUID` needs a secure context; plain http to a remote host has none). */
export function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Whether a send's answer was lost on the way, so the message may or may
 * not have been taken: no answer at all (the connection broke), a
 * gateway's 502 or 504 for a server that went away under it, or a 503 (a
 * server stopping hands its message over, a store or balancer not
 * answering yet). Sent again with its key, it is never a second message.
 */
export function answerLost(e) {
  return e instanceof ApiError && (e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504);
}

/** How many times a message is posted (with one key) while its answer is lost. */
export const SEND_ATTEMPTS = 8;

/** The pause before post number `attempt + 1`: 0.5 s more each time, at most 3 s (about 14 s in all). */
export function retryPause(attempt) {
  return Math.min(500 * attempt, 3000);
}

export const api = {
  // `before`: the last session of the page before ({updatedAt, id}), so ties in time are neither skipped nor repeated.
  sessions: (limit, before) =>
    call('GET', `/api/sessions?limit=${limit}${before ? `&before=${enc(before.updatedAt)}&beforeId=${enc(before.id)}` : ''}`),
  createSession: () => call('POST', '/api/sessions', {}),
  session: (id) => call('GET', `/api/sessions/${enc(id)}`),
  events: (id, fromSeq, limit = 1000) => call('GET', `/api/sessions/${enc(id)}/events?fromSeq=${fromSeq}&limit=${limit}`),
  thread: (id, fromSeq, toSeq) => call('GET', `/api/sessions/${enc(id)}/thread?fromSeq=${fromSeq}&toSeq=${toSeq}&limit=1000`),
  approvals: (id) => call('GET', `/api/sessions/${enc(id)}/approvals`),
  /** `key`: the message's `Idempotency-Key`; a retry with it is never a second message. */
  send: (id, text, attachments = [], key = newKey()) =>
    call('POST', `/api/sessions/${enc(id)}/messages`, attachments.length ? { text, wait: true, attachments } : { text, wait: true },
      { 'idempotency-key': key }),
  cancel: (id) => call('POST', `/api/sessions/${enc(id)}/cancel`, {}),
  fork: (id, atSeq) => call('POST', `/api/sessions/${enc(id)}/fork`, { atSeq }),
  answer: (runId, callId, allow, remember, instead) => {
    const body = { allow };
    if (remember) body.remember = remember;
    if (instead) body.instead = instead;
    return call('POST', `/api/runs/${enc(runId)}/approvals/${enc(callId)}`, body);
  },
  continuation: (id) => call('GET', `/api/continuations/${enc(id)}`),
  /** Every session's events that match `q`, best first: `{"hits": [...]}`. */
  search: (q, limit = 30) => call('GET', `/api/search?q=${enc(q)}&limit=${limit}`),
};

/** Every event of a session from `fromSeq` on, page after page. */
export async function allEvents(id, fromSeq = 1) {
  const events = [];
  let next = fromSeq;
  while (next !== null && next !== undefined) {
    const page = await api.events(id, next);
    events.push(...page.events);
    next = page.nextSeq;
  }
  return events;
}

/**
 * The WebSocket: `onFrame` hears every server frame; `onOpen` runs after
 * each (re)connect, so subscriptions are sent again. Reconnects with a
 * growing pause while the page is open.
 */
export class Socket {
  constructor(onFrame, onOpen) {
    this.onFrame = onFrame;
    this.onOpen = onOpen;
    this.pause = 500;
    this.ws = null;
    this.connect();
  }

  connect() {
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${window.location.host}/api/ws`);
    this.ws = ws;
    ws.addEventListener('open', () => {
      this.pause = 500;
      this.onOpen();
    });
    ws.addEventListener('message', (message) => {
      let frame;
      try { frame = JSON.parse(message.data); } catch { return; }
      this.onFrame(frame);
    });
    ws.addEventListener('close', () => {
      if (this.ws !== ws) return;
      setTimeout(() => this.connect(), this.pause);
      this.pause = Math.min(this.pause * 2, 10000);
    });
  }

  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }
}
