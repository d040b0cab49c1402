// The continuation edges the transcript draws: each loaded once per page
// (`GET /api/continuations/{id}`), found from a `continue_session` call,
// and the successor's title and handoff as the page knows them.

import { api } from './api.js';
import { handoffSections, sourceLine } from './handoff.js';
import { listed } from './page.js';
import { handoffBody } from './render.js';

/** An edge, as `GET /api/continuations/{id}` answers it, loaded once per page. */
export async function edge(v, id) {
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
export async function edgeOfCall(v, callId) {
  const ids = new Set();
  if (v.info.continuedTo) ids.add(v.info.continuedTo.continuationId);
  for (const s of listed.sessions) if (s.continuedFrom && s.continuedFrom.sessionId === v.id) ids.add(s.continuedFrom.continuationId);
  for (const id of ids) {
    try {
      const found = await edge(v, id);
      if (found.toolCallId === callId) return found;
    } catch { /* not this one, or not now */ }
  }
  return null;
}

/** The successor's title as the page knows it now: its link, its list entry, else the edge's. */
export function successorTitle(v, found) {
  const link = v.info.continuedTo;
  if (link && link.sessionId === found.successorSessionId) return link.title;
  const listed = listed.sessions.find((s) => s.id === found.successorSessionId);
  return listed ? listed.title : found.title;
}

/** The handoff and its sources, drawn from an edge. */
export function edgeHandoff(found) {
  return handoffBody(handoffSections(found.handoff), ((found.manifest && found.manifest.sources) || []).map(sourceLine));
}
