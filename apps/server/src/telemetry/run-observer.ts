import type { ModelCallRecord, RunEndOutcome, RunObserver } from '@cognition/runtime';
import { performance } from 'node:perf_hooks';
import type { ServerMetrics } from './metrics';

/**
 * The runtime's run observer as Prometheus series: runs started and ended by outcome, turn
 * latency and time to first token (from the run's acceptance), model calls, tokens and cost
 * by provider/model. Timing starts at `runStarted`; a run ended without having started here
 * (a recovery ending it) is counted but not timed.
 */
export class MetricsRunObserver implements RunObserver {
  private readonly started = new Map<string, { at: number; firstToken: boolean }>();

  constructor(private readonly metrics: ServerMetrics) {}

  runStarted(run: { runId: string; resumed: boolean }): void {
    this.metrics.runsStarted.inc({ resumed: String(run.resumed) });
    this.started.set(run.runId, { at: performance.now(), firstToken: false });
  }

  firstToken(run: { runId: string }): void {
    const started = this.started.get(run.runId);
    if (!started || started.firstToken) return;
    started.firstToken = true;
    this.metrics.timeToFirstToken.observe((performance.now() - started.at) / 1000);
  }

  modelCall(call: ModelCallRecord): void {
    const { provider, model } = call;
    this.metrics.modelCalls.inc({ provider, model, estimated: String(call.estimated) });
    this.metrics.tokens.inc({ provider, model, type: 'input' }, call.inputTokens);
    this.metrics.tokens.inc({ provider, model, type: 'output' }, call.outputTokens);
    if (call.costUsd === null) this.metrics.unpricedCalls.inc({ provider, model });
    else this.metrics.cost.inc({ provider, model }, call.costUsd);
  }

  runEnded(run: { runId: string; outcome: RunEndOutcome }): void {
    this.metrics.runsEnded.inc({ outcome: run.outcome });
    const started = this.started.get(run.runId);
    this.started.delete(run.runId);
    if (started && run.outcome !== 'handed_off') {
      this.metrics.turnDuration.observe(
        { outcome: run.outcome },
        (performance.now() - started.at) / 1000,
      );
    }
  }
}
