/** What a client reading one run's events (over several connections) checks as they come. */

export interface StreamEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

export type StreamProblem = 'gap' | 'duplicate' | 'after-terminal' | 'wrong-text';

function seqOf(id: string): number {
  return Number(id.slice(id.lastIndexOf(':') + 1));
}

/**
 * The events of one run as a client keeps them across reconnections: ids strictly increasing
 * (a repeat or a step back is a duplicate), each id the previous one's successor except where
 * a `token` event carries several merged tokens (docs/streaming.md: a merged token takes the id
 * of the last token it holds), nothing after the terminal event. `reconnected` frames repeat
 * the client's cursor and are left out.
 */
export class RunStream {
  readonly events: StreamEvent[] = [];
  readonly problems: { kind: StreamProblem; detail: string }[] = [];

  constructor(private readonly runId: string) {}

  get lastId(): string | null {
    return this.events.at(-1)?.id ?? null;
  }

  get terminal(): StreamEvent | null {
    const last = this.events.at(-1);
    return last && (last.event === 'done' || last.event === 'error') ? last : null;
  }

  add(event: StreamEvent): void {
    if (event.event === 'reconnected') return;
    const last = this.events.at(-1);
    if (this.terminal) {
      this.problems.push({ kind: 'after-terminal', detail: `${event.event} ${event.id}` });
      return;
    }
    if (!event.id.startsWith(`${this.runId}:`)) {
      this.problems.push({ kind: 'duplicate', detail: `${event.id} is not of run ${this.runId}` });
      return;
    }
    const previous = last ? seqOf(last.id) : 0;
    const seq = seqOf(event.id);
    if (seq <= previous) {
      this.problems.push({
        kind: 'duplicate',
        detail: `${event.event} ${event.id} after ${last?.id ?? '(start)'}`,
      });
      return;
    }
    if (seq !== previous + 1 && event.event !== 'token') {
      this.problems.push({
        kind: 'gap',
        detail: `${event.event} ${event.id} after ${last?.id ?? '(start)'}`,
      });
    }
    this.events.push(event);
  }

  /**
   * The answer a client rebuilds from tokens, dropping what a `resumed` event voids (the step
   * cut off by a crash is produced again after it).
   */
  text(): string {
    let kept: StreamEvent[] = [];
    for (const e of this.events) {
      if (e.event === 'resumed') {
        const voidAfter = seqOf(String(e.data['void_after_event_id']));
        kept = kept.filter((k) => seqOf(k.id) <= voidAfter);
      }
      kept.push(e);
    }
    return kept
      .filter((e) => e.event === 'token')
      .map((e) => String(e.data['content']))
      .join('');
  }

  /** At the terminal `done`: the rebuilt text and the stored answer must be `expected`. */
  checkAnswer(expected: string): void {
    const done = this.terminal;
    if (done?.event !== 'done') return;
    const text = this.text();
    const stored = (done.data['assistant_data'] as { content?: unknown } | null)?.content;
    if (text !== expected || stored !== expected) {
      this.problems.push({
        kind: 'wrong-text',
        detail: `tokens ${JSON.stringify(text.slice(-80))}, done ${JSON.stringify(String(stored).slice(-80))}; last events ${JSON.stringify(
          this.events
            .slice(-5)
            .map((e) => [e.id.slice(-4), e.event, JSON.stringify(e.data).slice(0, 120)]),
        )}`,
      });
    }
  }
}
