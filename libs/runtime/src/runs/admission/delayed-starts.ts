import type { Run } from '@cognition/contracts';

/** Whether a pending run may start at `now`: it has no start time, or that time has come. */
export function isDue(run: Pick<Run, 'startAfter'>, now: Date): boolean {
  return run.startAfter === null || run.startAfter.getTime() <= now.getTime();
}

/**
 * This process's wake-ups of sessions whose pending runs wait for a start time (a delayed run:
 * the LangGraph API's `after_seconds`). The time is the run row's (`startAfter`), so nothing is
 * lost with the process: recovery asks every session with pending runs to start its next one
 * at startup (and, in a cluster, every half lease on every node), which sets the wake-up again.
 * One timer per session, at its earliest start time.
 */
export class DelayedStarts {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  constructor(private readonly startNext: (sessionId: string) => void) {}

  /** Wakes the session at the earliest start time of `pending` (its runs not due yet). */
  wake(sessionId: string, pending: readonly Pick<Run, 'startAfter'>[]): void {
    const times = pending.flatMap((run) => (run.startAfter ? [run.startAfter.getTime()] : []));
    if (times.length === 0) return;
    const at = Math.min(...times);
    const current = this.timers.get(sessionId);
    if (current && current.at <= at) return;
    if (current) clearTimeout(current.timer);
    // Node's timers fire a millisecond early at times: a few more keep the run from being early.
    const timer = setTimeout(
      () => {
        this.timers.delete(sessionId);
        this.startNext(sessionId);
      },
      Math.max(0, at - Date.now()) + 5,
    );
    timer.unref();
    this.timers.set(sessionId, { at, timer });
  }

  /** Shutdown: no more wake-ups (the next process sets them again from the rows). */
  stop(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
