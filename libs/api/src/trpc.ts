import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import type { ApiContext } from './context';
import { requireAdmin } from './auth';
import { describeError, toTRPCError } from './errors';
import { assertWellFormedInput } from './well-formed-input';
import type { RateBucket } from './rate-limit';
import { RateLimitedError, tenantOf } from './rate-limit';

/** Interval of SSE pings on every subscription (like the original Cognition's 15 s heartbeat). */
export const SSE_PING_INTERVAL_MS = 15_000;
/** Silence after which a client reconnects; three missed pings. */
export const SSE_CLIENT_RECONNECT_AFTER_MS = 3 * SSE_PING_INTERVAL_MS;

/**
 * tRPC is initialised here and only here. Every error shape carries our `code` and, for
 * validation failures, the offending fields (`errors`), so tRPC clients can branch like REST
 * clients do; 500-class messages are generic and stacks are never sent.
 */
const t = initTRPC.context<ApiContext>().create({
  transformer: superjson,
  sse: {
    // Comment-free keep-alive: proxies and load balancers drop SSE connections that stay silent
    // (a long tool call emits nothing), so every subscription carries a ping.
    ping: { enabled: true, intervalMs: SSE_PING_INTERVAL_MS },
    // Told to the client: no byte (not even a ping) for this long means a half-dead connection;
    // it then reconnects with its last event id instead of waiting forever.
    client: { reconnectAfterInactivityMs: SSE_CLIENT_RECONNECT_AFTER_MS },
  },
  errorFormatter({ shape, error }) {
    const described = describeError(error);
    // Stacks name files and internals; callers get our code and message instead.
    const { stack: _stack, ...data } = shape.data;
    return {
      ...shape,
      message: described.message,
      data: { ...data, code: described.code, errors: described.issues ?? [] },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The one error-mapping middleware: whatever a procedure (or its input parser, which runs after
 * this middleware) failed with becomes a TRPCError whose code follows `errorCodeToStatus`, with
 * the original error kept as `cause`.
 */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) throw toTRPCError(result.error);
  return result;
});

/** Procedures outside every budget: what load balancers and monitors poll. */
const UNMETERED: ReadonlySet<string> = new Set(['health.get', 'health.ready']);
/** Procedures that start a run (the `runs` budget). */
const STARTS_RUN: ReadonlySet<string> = new Set([
  'messages.send',
  'messages.stream',
  'schedules.trigger',
]);

/**
 * Per-tenant rate limits (when configured): every call counts against `requests`, a send
 * against `runs` too; REST routes call these procedures, so both surfaces share one budget.
 */
const rateLimit = t.middleware(async ({ ctx, path, next }) => {
  const limiter = ctx.services.rateLimiter;
  if (limiter && !UNMETERED.has(path)) {
    const tenant = tenantOf(ctx.caller);
    const buckets: RateBucket[] = STARTS_RUN.has(path) ? ['requests', 'runs'] : ['requests'];
    for (const bucket of buckets) {
      const decision = await limiter.take(bucket, tenant);
      if (!decision.allowed) throw new RateLimitedError(bucket, decision.retryAfterSeconds);
    }
  }
  return next();
});

/** Runs before every input schema: strings that cannot be stored (NUL, unpaired surrogates) are refused, naming the field. */
const wellFormedInput = t.middleware(async ({ getRawInput, next }) => {
  assertWellFormedInput(await getRawInput());
  return next();
});

/** Base procedure of every route; callers are already authenticated/scoped by the context. */
export const publicProcedure = t.procedure.use(mapErrors).use(rateLimit).use(wellFormedInput);

/**
 * Procedures that change the server's configuration (registry writes): an admin caller only,
 * FORBIDDEN otherwise (checked after the budgets, like every other refusal of the procedure).
 */
export const adminProcedure = publicProcedure.use(({ ctx, next }) => {
  requireAdmin(ctx.caller);
  return next();
});
