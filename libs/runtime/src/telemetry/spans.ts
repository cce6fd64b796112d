import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import type { Outcome } from '../run-outcome';

/**
 * Spans of the runtime through the OpenTelemetry API: without an SDK registered (the server
 * registers one only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set) every call here is a no-op.
 * Names and attributes follow the GenAI semantic conventions where they exist.
 */
const TRACER_NAME = '@cognition/runtime';

/**
 * Baggage entries the run sets for everything below it (model and tool calls, sandbox and
 * storage spans): the server's span processor copies them onto every span as attributes.
 */
export const BAGGAGE_SESSION_ID = 'cognition.session_id';
export const BAGGAGE_RUN_ID = 'cognition.run_id';

function tracer() {
  // Looked up per span, not cached: a provider registered (or replaced) later still applies.
  return trace.getTracer(TRACER_NAME);
}

/** Runs `fn` inside an active span that ends when `fn` settles (an exception marks it failed). */
async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/**
 * The span of one run (`invoke_agent <agent>`), active while the run executes and finishes;
 * the session and run ids travel as baggage to every span below it.
 */
export function inRunSpan<T>(
  run: { runId: string; sessionId: string; resumed: boolean },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const baggage = (propagation.getActiveBaggage() ?? propagation.createBaggage())
    .setEntry(BAGGAGE_SESSION_ID, { value: run.sessionId })
    .setEntry(BAGGAGE_RUN_ID, { value: run.runId });
  return context.with(propagation.setBaggage(context.active(), baggage), () =>
    inSpan(
      'cognition.run',
      {
        'gen_ai.operation.name': 'invoke_agent',
        'cognition.run.id': run.runId,
        'cognition.session.id': run.sessionId,
        'cognition.run.resumed': run.resumed,
      },
      fn,
    ),
  );
}

/** Records how the run ended on its span (a failed run's span gets the error status). */
export function setRunOutcome(span: Span, outcome: Outcome, agentName?: string): void {
  span.setAttribute('cognition.run.outcome', outcome.kind);
  if (agentName !== undefined) span.setAttribute('gen_ai.agent.name', agentName);
  if (outcome.kind === 'failed') {
    span.setAttribute('error.type', outcome.error.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
  }
}

/** A model call's span (`chat <model>`), started now; ended by `endModelCallSpan`. */
export function startModelCallSpan(call: { provider: string; model: string }): Span {
  return tracer().startSpan(`chat ${call.model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': call.provider,
      'gen_ai.request.model': call.model,
    },
  });
}

/** Ends a model call's span with the tokens the usage meter counted, or with its error. */
export function endModelCallSpan(
  span: Span,
  result:
    | {
        usage: { inputTokens: number; outputTokens: number; estimated: boolean };
        aborted?: boolean;
      }
    | { error: unknown; aborted: boolean },
): void {
  if ('usage' in result) {
    span.setAttributes({
      'gen_ai.usage.input_tokens': result.usage.inputTokens,
      'gen_ai.usage.output_tokens': result.usage.outputTokens,
      'cognition.usage.estimated': result.usage.estimated,
    });
  }
  if (result.aborted === true) span.setAttribute('cognition.aborted', true);
  else if ('error' in result) failSpan(span, result.error);
  span.end();
}

/**
 * The span of one tool call (`execute_tool <name>`), active while the tool runs (so a sandbox
 * execution or a subagent's model calls nest under it); a non-zero exit code marks it failed.
 */
export function inToolSpan<T extends { exitCode: number }>(
  call: { id: string; name: string },
  fn: () => Promise<T>,
): Promise<T> {
  return inSpan(
    `execute_tool ${call.name}`,
    {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
    },
    async (span) => {
      const result = await fn();
      span.setAttribute('cognition.tool.exit_code', result.exitCode);
      if (result.exitCode !== 0) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: `exit code ${result.exitCode}` });
      }
      return result;
    },
  );
}

/** How a schedule's firing ended (the span's `cognition.schedule.outcome`). */
export type ScheduleFireOutcome = 'fired' | 'misfire' | 'skipped' | 'failed';

/**
 * The span of one firing of a schedule (`cognition.schedule.fire`), from the claim this node
 * won (`startTime`) to the run it started. Started only for an occurrence this node claimed,
 * so three nodes racing for one occurrence give one span. The storage calls of the firing
 * (session, admission) nest under it while `fn` runs.
 */
export async function inScheduleFireSpan<T>(
  fire: { scheduleId: string; dueAt: Date; reason: string; nodeId: string; startTime?: number },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan('cognition.schedule.fire', {
    kind: SpanKind.INTERNAL,
    ...(fire.startTime !== undefined ? { startTime: fire.startTime } : {}),
    attributes: {
      'cognition.schedule.id': fire.scheduleId,
      'cognition.schedule.due_at': fire.dueAt.toISOString(),
      'cognition.schedule.reason': fire.reason,
      'cognition.node.id': fire.nodeId,
    },
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (error) {
    span.setAttribute('cognition.schedule.outcome', 'failed');
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Records a firing's outcome on its span: the run it started and the lag from the due time. */
export function setScheduleFireOutcome(
  span: Span,
  result:
    | { outcome: 'fired' | 'misfire'; lagMs: number; runId: string; sessionId: string }
    | { outcome: 'skipped' }
    | { outcome: 'failed'; error: unknown },
): void {
  span.setAttribute('cognition.schedule.outcome', result.outcome);
  if (result.outcome === 'failed') failSpan(span, result.error);
  else if (result.outcome !== 'skipped') {
    span.setAttributes({
      'cognition.schedule.lag_ms': result.lagMs,
      'cognition.run.id': result.runId,
      'cognition.session.id': result.sessionId,
    });
  }
}
