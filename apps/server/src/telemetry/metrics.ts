import type { CircuitBreakerSnapshot, CircuitState } from '@cognition/circuit-breaker';
import type { RunAdmission } from '@cognition/runtime';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the metrics read at scrape time instead of tracking it (bound once the runtime exists). */
export interface MetricsSources {
  admission(): RunAdmission;
  breakers(): CircuitBreakerSnapshot[];
}

const CIRCUIT_STATES: readonly CircuitState[] = ['CLOSED', 'OPEN', 'HALF_OPEN'];

/** Latency buckets (seconds) of HTTP requests and storage operations: 1 ms to 10 s. */
const FAST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Buckets (seconds) of turns and first tokens: model calls take seconds to minutes. */
const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];

/**
 * Every Prometheus series of one server, on the server's own registry (never prom-client's
 * global one, so tests can build any number of apps). Label values are bounded: routes are
 * patterns (`/sessions/{id}`), never raw paths; models and providers come from configuration.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private sources: MetricsSources | null = null;

  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly runsStarted: Counter<'resumed'>;
  readonly runsEnded: Counter<'outcome'>;
  readonly turnDuration: Histogram<'outcome'>;
  readonly timeToFirstToken: Histogram;
  readonly modelCalls: Counter<'provider' | 'model' | 'estimated'>;
  readonly tokens: Counter<'provider' | 'model' | 'type'>;
  readonly cost: Counter<'provider' | 'model'>;
  readonly unpricedCalls: Counter<'provider' | 'model'>;
  readonly activeStreams: Gauge<'transport'>;
  readonly eventSubscriptions: Gauge;
  readonly sandboxExecutions: Counter<'backend' | 'exit'>;
  readonly sandboxDuration: Histogram<'backend'>;
  readonly storageDuration: Histogram<'backend' | 'operation' | 'outcome'>;
  readonly scheduleFires: Counter<'reason'>;
  readonly scheduleFailures: Counter<'reason'>;
  readonly scheduleMisfires: Counter<'policy'>;
  readonly scheduleLag: Histogram<'reason'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'cognition_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'cognition_http_request_duration_seconds',
      help: 'Time from request to the end of the response (an event stream counts until it ends).',
      labelNames: ['method', 'route', 'status'],
      buckets: FAST_BUCKETS,
      registers,
    });
    this.runsStarted = new Counter({
      name: 'cognition_runs_started_total',
      help: 'Runs accepted for execution by this process (resumed="true": taken up again after a restart).',
      labelNames: ['resumed'],
      registers,
    });
    this.runsEnded = new Counter({
      name: 'cognition_runs_finished_total',
      help: 'Runs that ended in this process, by outcome (completed, failed, aborted, interrupted, handed_off).',
      labelNames: ['outcome'],
      registers,
    });
    this.turnDuration = new Histogram({
      name: 'cognition_turn_duration_seconds',
      help: 'Time from a run being accepted (queueing included) to its terminal event, by outcome.',
      labelNames: ['outcome'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.timeToFirstToken = new Histogram({
      name: 'cognition_time_to_first_token_seconds',
      help: 'Time from a run being accepted to its first streamed token.',
      buckets: TURN_BUCKETS,
      registers,
    });
    this.modelCalls = new Counter({
      name: 'cognition_model_calls_total',
      help: 'Model calls (the agent\'s, subagents\', context summaries), by provider and model; estimated="true" when the provider reported no usage.',
      labelNames: ['provider', 'model', 'estimated'],
      registers,
    });
    this.tokens = new Counter({
      name: 'cognition_tokens_total',
      help: 'Tokens of model calls by provider, model and type (input, output).',
      labelNames: ['provider', 'model', 'type'],
      registers,
    });
    this.cost = new Counter({
      name: 'cognition_cost_usd_total',
      help: 'Cost in USD of model calls at the configured prices, by provider and model (calls of unknown price are not in it: see cognition_model_calls_unpriced_total).',
      labelNames: ['provider', 'model'],
      registers,
    });
    this.unpricedCalls = new Counter({
      name: 'cognition_model_calls_unpriced_total',
      help: 'Model calls whose price is unknown, so their cost is missing from cognition_cost_usd_total.',
      labelNames: ['provider', 'model'],
      registers,
    });
    this.activeStreams = new Gauge({
      name: 'cognition_active_streams',
      help: 'Open event streams by transport (rest_sse: REST text/event-stream, trpc_sse: the tRPC runs.events subscription, trpc_jsonl: the tRPC messages.stream mutation).',
      labelNames: ['transport'],
      registers,
    });
    this.eventSubscriptions = new Gauge({
      name: 'cognition_event_subscriptions',
      help: 'Live subscriptions on the event log (one per stream following a session).',
      registers,
    });
    this.sandboxExecutions = new Counter({
      name: 'cognition_sandbox_executions_total',
      help: 'Commands executed in sandboxes, by backend and exit (the exit code, "timeout", or "error" when the sandbox failed to run it).',
      labelNames: ['backend', 'exit'],
      registers,
    });
    this.sandboxDuration = new Histogram({
      name: 'cognition_sandbox_execution_duration_seconds',
      help: 'Duration of sandbox command executions by backend.',
      labelNames: ['backend'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.storageDuration = new Histogram({
      name: 'cognition_storage_operation_duration_seconds',
      help: 'Duration of storage operations (one port call: a transaction or statement), by backend, operation and outcome (ok, error).',
      labelNames: ['backend', 'operation', 'outcome'],
      buckets: FAST_BUCKETS,
      registers,
    });
    this.scheduleFires = new Counter({
      name: 'cognition_schedule_fires_total',
      help: 'Schedule firings that started a run on this node, by reason (scheduled, misfire: one coalesced run for missed times, manual: triggered).',
      labelNames: ['reason'],
      registers,
    });
    this.scheduleFailures = new Counter({
      name: 'cognition_schedule_fire_failures_total',
      help: 'Schedule firings given up on this node (target session gone, the send refused), by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.scheduleMisfires = new Counter({
      name: 'cognition_schedule_misfires_total',
      help: 'Schedule occurrences missed while no node ran, by policy (run_once: fired coalesced, skip: skipped).',
      labelNames: ['policy'],
      registers,
    });
    this.scheduleLag = new Histogram({
      name: 'cognition_schedule_lag_seconds',
      help: "Time from a schedule occurrence's due time to the creation of its run, by reason.",
      labelNames: ['reason'],
      buckets: FAST_BUCKETS,
      registers,
    });
    const sources = () => this.sources;
    new Gauge({
      name: 'cognition_runs_executing',
      help: 'Runs holding an execution slot in this process.',
      registers,
      collect() {
        const admission = sources()?.admission();
        if (admission) this.set(admission.executing);
      },
    });
    new Gauge({
      name: 'cognition_runs_queued',
      help: 'Runs accepted and waiting for an execution slot (status queued).',
      registers,
      collect() {
        const admission = sources()?.admission();
        if (admission) this.set(admission.queued);
      },
    });
    new Gauge({
      name: 'cognition_runs_concurrency_limit',
      help: 'Runs this process executes at once (COGNITION_MAX_CONCURRENT_RUNS).',
      registers,
      collect() {
        const admission = sources()?.admission();
        if (admission) this.set(admission.limit);
      },
    });
    new Gauge({
      name: 'cognition_circuit_breaker_state',
      help: 'Circuit breaker state: 1 for the current state of each breaker, 0 for the others.',
      labelNames: ['breaker', 'state'],
      registers,
      collect() {
        this.reset();
        for (const snapshot of sources()?.breakers() ?? []) {
          for (const state of CIRCUIT_STATES) {
            this.set({ breaker: snapshot.name, state }, snapshot.state === state ? 1 : 0);
          }
        }
      },
    });
  }

  /** Where the scrape-time gauges (run admission, circuit breakers) read their values. */
  bind(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** Counts an open event stream until the returned function is called (idempotent). */
  trackStream(transport: 'rest_sse' | 'trpc_sse' | 'trpc_jsonl'): () => void {
    this.activeStreams.inc({ transport });
    let open = true;
    return () => {
      if (open) this.activeStreams.dec({ transport });
      open = false;
    };
  }
}
