import type { ScheduleObserver } from '@cognition/runtime';
import type { ServerMetrics } from './metrics';

/** The scheduler's reports as Prometheus series (fires, failures, misfires, lag). */
export class MetricsScheduleObserver implements ScheduleObserver {
  constructor(private readonly metrics: ServerMetrics) {}

  fired(reason: string, lagMs: number): void {
    this.metrics.scheduleFires.inc({ reason });
    this.metrics.scheduleLag.observe({ reason }, lagMs / 1000);
  }

  failed(reason: string): void {
    this.metrics.scheduleFailures.inc({ reason });
  }

  misfired(policy: string): void {
    this.metrics.scheduleMisfires.inc({ policy });
  }
}
