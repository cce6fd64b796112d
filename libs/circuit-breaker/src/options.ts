import { toFieldIssues } from '@cognition/contracts';
import { z } from 'zod';
import { CircuitBreakerConfigError } from './errors';
import type { Clock } from './types';

/** Decides whether an error thrown by the protected function means the dependency is failing. */
export type IsFailure = (error: unknown) => boolean;

/**
 * Configuration of one breaker. Every field is optional; see `DEFAULT_OPTIONS`.
 * Unknown fields are rejected so that a misspelt option fails loudly instead of being ignored.
 */
export interface CircuitBreakerOptions {
  /** Consecutive failures in `CLOSED` that open the circuit. Integer >= 1. */
  failureThreshold?: number;
  /** Successful trial calls in `HALF_OPEN` that close the circuit. Integer >= 1. */
  successThreshold?: number;
  /** Time in `OPEN` before trial calls are admitted. Positive, may be fractional. */
  timeoutSeconds?: number;
  /** Trial calls allowed in flight at once in `HALF_OPEN`. Integer >= 1. */
  halfOpenMaxCalls?: number;
  /**
   * `true` when the error counts against the dependency. An error classified `false` (e.g. a
   * 4xx: the provider answered, the request was wrong) is still rethrown to the caller, but the
   * state machine treats the call as a success. If the predicate throws, the call counts as a
   * failure. Default: every error is a failure.
   */
  isFailure?: IsFailure;
  /** Default: the system clock. */
  clock?: Clock;
  /**
   * Receives errors thrown by state-change listeners, which are isolated from the call that
   * caused the transition. Default: such errors are dropped (libraries have no logger of their
   * own; pass one here).
   */
  onListenerError?: (error: unknown, breakerName: string) => void;
}

/** Options after defaults were applied and validation passed. */
export interface ResolvedCircuitBreakerOptions {
  failureThreshold: number;
  successThreshold: number;
  timeoutSeconds: number;
  halfOpenMaxCalls: number;
  isFailure: IsFailure;
  clock: Clock;
  onListenerError: (error: unknown, breakerName: string) => void;
}

export const DEFAULT_OPTIONS = {
  failureThreshold: 5,
  successThreshold: 3,
  timeoutSeconds: 60,
  halfOpenMaxCalls: 3,
} as const satisfies Partial<ResolvedCircuitBreakerOptions>;

const systemClock: Clock = { now: () => Date.now() };
const everyErrorIsAFailure: IsFailure = () => true;
const ignoreListenerError = (): void => undefined;

const positiveInt = z.number().int().min(1);

const OptionsSchema = z.strictObject({
  failureThreshold: positiveInt.optional(),
  successThreshold: positiveInt.optional(),
  timeoutSeconds: z.number().positive().optional(),
  halfOpenMaxCalls: positiveInt.optional(),
  isFailure: z
    .custom<IsFailure>((value) => typeof value === 'function', 'Expected a function')
    .optional(),
  clock: z
    .custom<Clock>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { now?: unknown }).now === 'function',
      'Expected an object with a now() function',
    )
    .optional(),
  onListenerError: z
    .custom<(error: unknown, breakerName: string) => void>(
      (value) => typeof value === 'function',
      'Expected a function',
    )
    .optional(),
});

const NameSchema = z
  .string()
  .regex(/^\S(.*\S)?$/, 'Expected a non-empty name without leading or trailing whitespace');

function fail(what: string, error: z.ZodError, prefix?: string): never {
  const issues = toFieldIssues(error).map((issue) => ({
    ...issue,
    path:
      prefix === undefined
        ? issue.path
        : issue.path === '(root)'
          ? prefix
          : `${prefix}.${issue.path}`,
  }));
  throw new CircuitBreakerConfigError(
    `Invalid ${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    issues,
  );
}

/**
 * Validates a breaker name: a non-empty string without surrounding whitespace (names are compared
 * exactly, so `' openai'` would silently be a second breaker).
 */
export function parseName(name: unknown): string {
  const result = NameSchema.safeParse(name);
  if (!result.success) fail('circuit breaker name', result.error, 'name');
  return result.data;
}

/** Validates partial options without applying defaults (used for registry-wide defaults). */
export function parseOptions(
  options: unknown,
  what: string,
  fieldPrefix?: string,
): CircuitBreakerOptions {
  const result = OptionsSchema.safeParse(options ?? {});
  if (!result.success) fail(what, result.error, fieldPrefix);
  return result.data;
}

/** Validates `options` and fills in the defaults. */
export function resolveOptions(options: unknown, what: string): ResolvedCircuitBreakerOptions {
  const parsed = parseOptions(options, what);
  return {
    failureThreshold: parsed.failureThreshold ?? DEFAULT_OPTIONS.failureThreshold,
    successThreshold: parsed.successThreshold ?? DEFAULT_OPTIONS.successThreshold,
    timeoutSeconds: parsed.timeoutSeconds ?? DEFAULT_OPTIONS.timeoutSeconds,
    halfOpenMaxCalls: parsed.halfOpenMaxCalls ?? DEFAULT_OPTIONS.halfOpenMaxCalls,
    isFailure: parsed.isFailure ?? everyErrorIsAFailure,
    clock: parsed.clock ?? systemClock,
    onListenerError: parsed.onListenerError ?? ignoreListenerError,
  };
}
