import type { Logger } from '../logger';
import type { ClaimedFiring } from './firing-batch';
import type { Clock } from './schedule-times';

/**
 * The occurrences a pass claimed ahead of their due time (look-ahead), earliest first: they
 * wait on the node and fire when due, while the next passes go on claiming.
 */
export class UpcomingFirings {
  private readonly upcoming: ClaimedFiring[] = [];
  private draining: Promise<void> | undefined;

  constructor(
    private readonly clock: Clock,
    /** Fires a group of them once due (the runner's batch firing). */
    private readonly fireGroup: (group: ClaimedFiring[]) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Adds occurrences claimed ahead; they fire when due. */
  add(claimed: ClaimedFiring[]): void {
    if (claimed.length === 0) return;
    this.upcoming.push(...claimed);
    this.upcoming.sort((a, b) => a.c.dueAt.getTime() - b.c.dueAt.getTime());
    this.drain();
  }

  /** Resolves once every occurrence waiting here has fired (at most the look-ahead away). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /**
   * Fires the occurrences claimed ahead as they come due: each time the earliest left is due,
   * every one due by then together. One loop at a time; `stop` waits for it.
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = (async () => {
      while (this.upcoming.length > 0) {
        await this.untilFirstDue();
        const now = this.clock.now().getTime();
        const later = this.upcoming.findIndex((u) => u.c.dueAt.getTime() > now);
        const group = this.upcoming.splice(0, later === -1 ? this.upcoming.length : later);
        try {
          await this.fireGroup(group);
        } catch (error) {
          // Their fires stay without a run: taken over after the claim timeout.
          this.logger.error({ err: error }, 'scheduler firings failed');
        }
      }
    })().finally(() => {
      this.draining = undefined;
      if (this.upcoming.length > 0) this.drain();
    });
  }

  /** Resolves once the earliest occurrence waiting in `upcoming` is due. */
  private async untilFirstDue(): Promise<void> {
    for (;;) {
      const first = this.upcoming[0];
      if (!first) return;
      const left = first.c.dueAt.getTime() - this.clock.now().getTime();
      if (left <= 0) return;
      // Re-read at least every 50 ms: an injected clock moves, an earlier claim may arrive.
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, 50)));
    }
  }
}
