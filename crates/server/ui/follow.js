// When a page moves to a successor: the rules of following a
// continuation, with no DOM and no network, so they read as a whole.
//
// - Only on the transition: `continuedTo` was absent (or named another
//   successor) when this page opened the session, then appeared. A
//   successor that existed at first load is history.
// - Only when this page follows the turn: it sent the message (the send's
//   answer names the successor: move at once), or it opened the session
//   while a run was already streaming and watched it (the first frame it
//   saw of that run was not its start). A page that sat on the session
//   while someone else started a turn stays, and shows a notice (as every
//   page on a continued session does).
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
      sent: false,
      joined: false,
      runs: new Set(),
    };
  }

  /** This page sent a message in the session. */
  sent(view) {
    view.sent = true;
  }

  /** A `run-event` frame of the session arrived. */
  runEvent(view, runId, event) {
    if (!runId || view.runs.has(runId)) return;
    view.runs.add(runId);
    if (event && event.type !== 'run_started') view.joined = true;
  }

  /**
   * Whether to move now that the session's info is `info`: `{move: id}`
   * to go to the successor, or `null` to stay (the page then shows the
   * continuation as a notice).
   */
  decide(view, info) {
    const link = info.continuedTo;
    if (!link || link.sessionId === view.initialTo) return null;
    if ((view.sent || view.joined) && !this.moved.has(link.sessionId)) {
      this.moved.add(link.sessionId);
      return { move: link.sessionId };
    }
    return null;
  }

  /** The send's answer named `successor`: move at once, once. */
  answered(view, successor) {
    if (!successor || successor === view.initialTo || this.moved.has(successor)) return null;
    this.moved.add(successor);
    return { move: successor };
  }
}
