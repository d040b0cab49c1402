// When a page moves to a successor: the rules of following a
// continuation, with no DOM and no network, so they read as a whole.
//
// - Only on the transition: `continuedTo` was absent (or named another
//   successor) when this page opened the session, then appeared. A
//   successor that existed at first load is history.
// - Only when this page follows *that* turn: it saw the run that
//   continued streaming (any frame of it, from its start or joined
//   midway), or it sent that run's message (the send's answer names the
//   successor: move at once). Sending some earlier message is not
//   following a later turn; a page that saw nothing of the turn stays and
//   shows a notice (as every page on a continued session does).
// - Once per successor: Back returns to the predecessor, which now opens
//   with that successor as history, so it is never redirected again.

export class Following {
  constructor() {
    /** Successors this page has moved to. */
    this.moved = new Set();
  }

  /** A session was opened (first load or Back) with `info`. */
  open(info) {
    return {
      sessionId: info.id,
      initialTo: info.continuedTo ? info.continuedTo.sessionId : null,
      /** Runs this page saw frames of and not their end. */
      live: new Set(),
      /** Runs that ended, as this page saw. */
      ended: new Set(),
      /** Successors named by a `continued` frame of a run this page saw. */
      seen: new Set(),
    };
  }

  /** A `run-event` frame of the session arrived. */
  runEvent(view, runId, event) {
    if (!runId) return;
    const type = event && event.type;
    if (type === 'continued' && event.session_id) view.seen.add(event.session_id);
    if (type === 'run_finished') {
      view.live.delete(runId);
      view.ended.add(runId);
    } else if (!view.ended.has(runId)) {
      view.live.add(runId);
    }
  }

  /**
   * Whether to move now that the session's info is `info`: `{move: id}`
   * to go to the successor, or `null` to stay (the page then shows the
   * continuation as a notice). Asked again when a `continued` frame
   * arrives, since it may come after the info that names the successor.
   */
  decide(view, info) {
    const link = info && info.continuedTo;
    if (!link || link.sessionId === view.initialTo || this.moved.has(link.sessionId)) return null;
    // The run that continued is the one this page saw say so, or one it
    // saw going when the successor appeared: a continuation is made by a
    // run in its turn.
    if (view.seen.has(link.sessionId) || view.live.size > 0) {
      this.moved.add(link.sessionId);
      return { move: link.sessionId };
    }
    return null;
  }

  /** The answer to this page's message named `successor`: move at once, once. */
  answered(view, successor) {
    if (!successor || successor === view.initialTo || this.moved.has(successor)) return null;
    this.moved.add(successor);
    return { move: successor };
  }
}
