import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { RunFence } from '@cognition/storage';
import { isRunFenced } from '@cognition/storage';
import type { EventLog } from '../events/event-log';
import { eventId } from '../ids';
import type { Logger } from '../logger';

/**
 * Numbers and appends the events of one run. Invariants: ids are `<runId>:<seq>` with seq
 * 1, 2, 3, ... in emission order; each event is handed to the log as it is emitted, so the log
 * sees them in that order (and a durable log can group the ones emitted while it writes); at
 * most one terminal event is ever appended and nothing after it.
 */
export class RunEmitter {
  private seq: number;
  private tail: Promise<void> = Promise.resolve();
  private terminated = false;
  private abandoned = false;

  constructor(
    private readonly log: EventLog,
    readonly sessionId: string,
    readonly runId: string,
    private readonly logger: Logger,
    startSeq = 0,
    /**
     * The claim the run is executed under: every append carries it, and once the log refuses
     * one (another claim took the run over) nothing more is emitted and `onFenced` is called.
     */
    private readonly fencing: { fence?: RunFence | null; onFenced?: () => void } = {},
  ) {
    this.seq = startSeq;
  }

  /** The id of the run's last event (counting from `startSeq`; null when there is none). */
  get lastId(): string | null {
    return this.seq > 0 ? eventId(this.runId, this.seq) : null;
  }

  get finished(): boolean {
    return this.terminated;
  }

  /**
   * Emits nothing more: another node took the run over and numbers its events from the last
   * stored one (see `EventLog.abandon`).
   */
  abandon(): void {
    this.abandoned = true;
  }

  /** Returns the envelope, or null when the run already emitted its terminal event or was abandoned. */
  emit(event: AgentEvent): AgentEventEnvelope | null {
    if (this.terminated || this.abandoned) return null;
    if (isTerminalEvent(event)) this.terminated = true;
    this.seq += 1;
    const envelope: AgentEventEnvelope = {
      id: eventId(this.runId, this.seq),
      sessionId: this.sessionId,
      runId: this.runId,
      at: new Date().toISOString(),
      event,
    };
    const appended = this.log
      .append(envelope, this.fencing.fence ?? undefined)
      .catch((error: unknown) => {
        if (isRunFenced(error)) {
          // Another claim holds the run: its new owner numbers events after the last stored
          // one, so nothing more of ours may be emitted (nor stored, nor published).
          if (!this.abandoned) {
            this.abandoned = true;
            this.logger.warn(
              { runId: this.runId, eventId: envelope.id },
              'run fenced: another claim took it over; its events are no longer written here',
            );
            this.fencing.onFenced?.();
          }
          return;
        }
        // Abandoned (handed over, fenced): the log drops what it still held of the run.
        if (this.abandoned) return;
        this.logger.error({ err: error, eventId: envelope.id }, 'event log append failed');
      });
    this.tail = Promise.all([this.tail, appended]).then(() => undefined);
    return envelope;
  }

  /** Resolves once the log accepted every emitted event (stored, for a durable log). */
  flush(): Promise<void> {
    return this.tail;
  }
}
