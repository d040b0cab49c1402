// What the runs of the session on screen are doing, folded from run
// frames and questions only (`run-event`, `approval-requested`, and this
// page's own answers and sends), so every tab says the same and nothing
// outlives the run that caused it: a `run_finished` frame ends its run's
// tools and questions. No DOM and no network here.

export class RunState {
  constructor() {
    /** Runs this page saw start or stream and not finish: runId → Map(callId → tool). */
    this.runs = new Map();
    /** Runs this page saw finish; their late frames are ignored. */
    this.finished = new Set();
    /** Questions waiting for a person: callId → {runId, tool}. */
    this.waiting = new Map();
    /** This page is sending a message and has no frame of its run yet. */
    this.sending = false;
  }

  tools(runId) {
    if (!this.runs.has(runId)) this.runs.set(runId, new Map());
    return this.runs.get(runId);
  }

  /** A `run-event` frame of the session: `event` is its `StreamEvent`. */
  event(runId, event) {
    if (!runId || this.finished.has(runId)) return;
    this.sending = false;
    const type = event && event.type;
    if (type === 'run_finished') {
      this.finished.add(runId);
      this.runs.delete(runId);
      for (const [callId, question] of this.waiting) if (question.runId === runId) this.waiting.delete(callId);
      return;
    }
    const tools = this.tools(runId);
    if (type === 'tool_started') tools.set(event.id, event.name);
    if (type === 'tool_finished') {
      tools.delete(event.id);
      this.waiting.delete(event.id);
    }
  }

  /** An `approval-requested` frame (or one of `GET …/approvals`). */
  asked(frame) {
    if (this.finished.has(frame.runId)) return;
    this.tools(frame.runId);
    this.waiting.set(frame.callId, { runId: frame.runId, tool: frame.tool });
  }

  /** A question was answered (here or elsewhere: its result is stored). */
  settled(callId) {
    this.waiting.delete(callId);
  }

  /** Whether a run is going (or this page's message is on its way to one). */
  get active() {
    return this.sending || this.runs.size > 0 || this.waiting.size > 0;
  }

  /** The run this page would cancel: any it saw going. */
  get runId() {
    const first = this.runs.keys().next();
    return first.done ? null : first.value;
  }

  /**
   * The status line: `Waiting for you: bash asks to run` while a question
   * waits (never "running"), `Running bash…` while a tool runs, `Working…`
   * while the model does, '' when nothing runs.
   */
  get label() {
    if (this.waiting.size) {
      const tools = [...new Set([...this.waiting.values()].map((q) => q.tool))];
      return `Waiting for you: ${tools.join(', ')} ${tools.length === 1 && this.waiting.size === 1 ? 'asks' : 'ask'} to run`;
    }
    const running = [];
    for (const tools of this.runs.values()) running.push(...tools.values());
    if (running.length) return `Running ${[...new Set(running)].join(', ')}…`;
    if (this.runs.size || this.sending) return 'Working…';
    return '';
  }

  /** `waiting`, `running` or `idle`, for styling and tests. */
  get phase() {
    if (this.waiting.size) return 'waiting';
    return this.active ? 'running' : 'idle';
  }
}
