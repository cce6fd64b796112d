import { CircuitBreaker } from './circuit-breaker';
import { CircuitBreakerConfigError, CircuitOpenError, isCircuitOpenError } from './errors';
import type { CircuitBreakerOptions } from './options';
import type { CircuitState } from './types';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');

class FakeClock {
  constructor(public ms = T0) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

class ProviderError extends Error {
  constructor(readonly status: number) {
    super(`provider answered ${status}`);
  }
}

const boom = () => Promise.reject(new Error('boom'));
const ok = () => Promise.resolve('ok');

async function failTimes(breaker: CircuitBreaker, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    await expect(breaker.execute(boom)).rejects.toThrow('boom');
  }
}

function setup(options: CircuitBreakerOptions = {}) {
  const clock = new FakeClock();
  const breaker = new CircuitBreaker('openai', { clock, ...options });
  const transitions: [string, CircuitState, CircuitState][] = [];
  breaker.onStateChange((name, from, to) => transitions.push([name, from, to]));
  return { clock, breaker, transitions };
}

/** Opens the breaker and lets the open timeout elapse so the next call observes HALF_OPEN. */
async function toHalfOpen(ctx: ReturnType<typeof setup>): Promise<void> {
  await failTimes(ctx.breaker, ctx.breaker.options.failureThreshold);
  ctx.clock.advance(ctx.breaker.options.timeoutSeconds * 1000);
  expect(ctx.breaker.state).toBe('HALF_OPEN');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('CircuitBreaker', () => {
  describe('CLOSED', () => {
    it('passes results through and applies the documented defaults', async () => {
      const { breaker } = setup();
      await expect(breaker.execute(ok)).resolves.toBe('ok');
      expect(breaker.state).toBe('CLOSED');
      expect(breaker.options).toMatchObject({
        failureThreshold: 5,
        successThreshold: 3,
        timeoutSeconds: 60,
        halfOpenMaxCalls: 3,
      });
    });

    it('rethrows the original error unchanged', async () => {
      const { breaker } = setup();
      const error = new ProviderError(503);
      await expect(breaker.execute(() => Promise.reject(error))).rejects.toBe(error);
    });

    it('opens on exactly failureThreshold consecutive failures and tells listeners', async () => {
      const { breaker, transitions, clock } = setup();
      await failTimes(breaker, 4);
      expect(breaker.state).toBe('CLOSED');
      expect(transitions).toEqual([]);
      clock.advance(1234);
      await failTimes(breaker, 1);
      expect(breaker.state).toBe('OPEN');
      expect(transitions).toEqual([['openai', 'CLOSED', 'OPEN']]);
      expect(breaker.snapshot().openedAt).toEqual(new Date(T0 + 1234));
    });

    it('honours a custom failureThreshold', async () => {
      const { breaker } = setup({ failureThreshold: 2 });
      await failTimes(breaker, 1);
      expect(breaker.state).toBe('CLOSED');
      await failTimes(breaker, 1);
      expect(breaker.state).toBe('OPEN');
    });

    it('resets the streak on a success, so only consecutive failures count', async () => {
      const { breaker } = setup();
      await failTimes(breaker, 4);
      await breaker.execute(ok);
      expect(breaker.snapshot().consecutiveFailures).toBe(0);
      await failTimes(breaker, 4);
      expect(breaker.state).toBe('CLOSED');
      await failTimes(breaker, 1);
      expect(breaker.state).toBe('OPEN');
    });

    it('counts a synchronous throw of the protected function as a failure and rethrows it', async () => {
      const { breaker } = setup({ failureThreshold: 1 });
      const throwsSync = (): Promise<string> => {
        throw new Error('sync');
      };
      await expect(breaker.execute(throwsSync)).rejects.toThrow('sync');
      expect(breaker.state).toBe('OPEN');
    });

    it('opens once when many concurrent calls fail, counting every failure', async () => {
      const { breaker, transitions } = setup();
      const calls = Array.from({ length: 10 }, () => deferred<string>());
      const results = calls.map((call) => breaker.execute(() => call.promise));
      expect(breaker.snapshot().totalCalls).toBe(10);
      calls.forEach((call) => call.reject(new Error('down')));
      const settled = await Promise.allSettled(results);
      expect(settled.every((r) => r.status === 'rejected')).toBe(true);
      expect(transitions).toEqual([['openai', 'CLOSED', 'OPEN']]);
      expect(breaker.snapshot()).toMatchObject({
        state: 'OPEN',
        totalCalls: 10,
        failedCalls: 10,
        consecutiveFailures: 5,
      });
    });
  });

  describe('OPEN', () => {
    it('fails fast with a typed CircuitOpenError without calling the function', async () => {
      const { breaker, clock } = setup();
      await failTimes(breaker, 5);
      clock.advance(15_000);
      const fn = jest.fn(ok);
      const error = await rejection(breaker.execute(fn));
      expect(fn).not.toHaveBeenCalled();
      expect(isCircuitOpenError(error)).toBe(true);
      expect(error).toBeInstanceOf(CircuitOpenError);
      expect(error).toMatchObject({
        name: 'CircuitOpenError',
        code: 'CIRCUIT_OPEN',
        breakerName: 'openai',
        state: 'OPEN',
        retryAt: new Date(T0 + 60_000),
        retryAfterMs: 45_000,
      });
      expect((error as Error).message).toContain('openai');
      expect(breaker.snapshot()).toMatchObject({ totalCalls: 5, rejectedCalls: 1 });
    });

    it('stays OPEN until timeoutSeconds have elapsed, then admits trial calls', async () => {
      const { breaker, clock, transitions } = setup({ timeoutSeconds: 30 });
      await failTimes(breaker, 5);
      clock.advance(29_999);
      expect(breaker.state).toBe('OPEN');
      const error = await rejection(breaker.execute(ok));
      expect(error).toMatchObject({ retryAfterMs: 1 });
      clock.advance(1);
      await expect(breaker.execute(ok)).resolves.toBe('ok');
      expect(transitions).toEqual([
        ['openai', 'CLOSED', 'OPEN'],
        ['openai', 'OPEN', 'HALF_OPEN'],
      ]);
      expect(breaker.state).toBe('HALF_OPEN');
    });

    it('moves to HALF_OPEN lazily on a snapshot, notifying once, with no timer running', async () => {
      jest.useFakeTimers();
      try {
        const { breaker, clock, transitions } = setup();
        await failTimes(breaker, 5);
        expect(jest.getTimerCount()).toBe(0);
        clock.advance(60_000);
        expect(transitions).toHaveLength(1);
        expect(breaker.snapshot().state).toBe('HALF_OPEN');
        expect(breaker.snapshot().state).toBe('HALF_OPEN');
        expect(transitions).toEqual([
          ['openai', 'CLOSED', 'OPEN'],
          ['openai', 'OPEN', 'HALF_OPEN'],
        ]);
        expect(breaker.snapshot().openedAt).toEqual(new Date(T0));
        expect(jest.getTimerCount()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });

    it('ignores the outcome of calls admitted before it opened', async () => {
      const { breaker, clock } = setup({ failureThreshold: 1 });
      const slow = deferred<string>();
      const slowCall = breaker.execute(() => slow.promise);
      await failTimes(breaker, 1);
      expect(breaker.state).toBe('OPEN');
      slow.resolve('late');
      await expect(slowCall).resolves.toBe('late');
      expect(breaker.snapshot()).toMatchObject({ state: 'OPEN', consecutiveFailures: 1 });
      clock.advance(59_999);
      expect(breaker.state).toBe('OPEN');
    });
  });

  describe('HALF_OPEN', () => {
    it('admits at most halfOpenMaxCalls concurrent trials: 5 at once -> 3 run, 2 fail fast', async () => {
      const ctx = setup();
      await toHalfOpen(ctx);
      const trials = Array.from({ length: 5 }, () => deferred<string>());
      const fns = trials.map((trial) => jest.fn(() => trial.promise));
      // allSettled subscribes to every call at once, so a failing assertion below cannot leave
      // a rejection unhandled.
      const settled = Promise.allSettled(fns.map((fn) => ctx.breaker.execute(fn)));
      expect(fns.map((fn) => fn.mock.calls.length)).toEqual([1, 1, 1, 0, 0]);
      trials.slice(0, 3).forEach((trial, i) => trial.resolve(`trial ${i}`));
      const outcomes = await settled;
      expect(outcomes.slice(0, 3)).toEqual(
        [0, 1, 2].map((i) => ({ status: 'fulfilled', value: `trial ${i}` })),
      );
      for (const outcome of outcomes.slice(3)) {
        expect(outcome.status).toBe('rejected');
        const error: unknown = outcome.status === 'rejected' ? outcome.reason : undefined;
        expect(error).toBeInstanceOf(CircuitOpenError);
        expect(error).toMatchObject({
          state: 'HALF_OPEN',
          retryAfterMs: 0,
          retryAt: new Date(ctx.clock.now()),
        });
      }
      expect(ctx.breaker.state).toBe('CLOSED');
      expect(ctx.transitions.at(-1)).toEqual(['openai', 'HALF_OPEN', 'CLOSED']);
      expect(ctx.breaker.snapshot()).toMatchObject({
        totalCalls: 8,
        failedCalls: 5,
        rejectedCalls: 2,
        consecutiveFailures: 0,
        openedAt: null,
      });
    });

    it('frees a trial slot when a trial settles', async () => {
      const ctx = setup({ halfOpenMaxCalls: 1 });
      await toHalfOpen(ctx);
      const first = deferred<string>();
      const firstCall = ctx.breaker.execute(() => first.promise);
      await expect(ctx.breaker.execute(ok)).rejects.toBeInstanceOf(CircuitOpenError);
      first.resolve('first');
      await firstCall;
      await expect(ctx.breaker.execute(ok)).resolves.toBe('ok');
    });

    it('closes only after successThreshold successful trials', async () => {
      const ctx = setup({ halfOpenMaxCalls: 1, successThreshold: 3 });
      await toHalfOpen(ctx);
      await ctx.breaker.execute(ok);
      await ctx.breaker.execute(ok);
      expect(ctx.breaker.state).toBe('HALF_OPEN');
      await ctx.breaker.execute(ok);
      expect(ctx.breaker.state).toBe('CLOSED');
      expect(ctx.transitions.map(([, from, to]) => `${from}->${to}`)).toEqual([
        'CLOSED->OPEN',
        'OPEN->HALF_OPEN',
        'HALF_OPEN->CLOSED',
      ]);
    });

    it('starts a fresh failure streak after closing', async () => {
      const ctx = setup({ successThreshold: 1 });
      await toHalfOpen(ctx);
      await ctx.breaker.execute(ok);
      expect(ctx.breaker.state).toBe('CLOSED');
      await failTimes(ctx.breaker, 4);
      expect(ctx.breaker.state).toBe('CLOSED');
    });

    it('reopens on any failed trial, restarting the open timeout from then', async () => {
      const ctx = setup();
      await toHalfOpen(ctx);
      await ctx.breaker.execute(ok);
      await ctx.breaker.execute(ok);
      ctx.clock.advance(500);
      await failTimes(ctx.breaker, 1);
      expect(ctx.breaker.state).toBe('OPEN');
      expect(ctx.transitions.at(-1)).toEqual(['openai', 'HALF_OPEN', 'OPEN']);
      const reopenedAt = T0 + 60_000 + 500;
      expect(ctx.breaker.snapshot().openedAt).toEqual(new Date(reopenedAt));
      const error = await rejection(ctx.breaker.execute(ok));
      expect(error).toMatchObject({ retryAt: new Date(reopenedAt + 60_000), retryAfterMs: 60_000 });
      ctx.clock.advance(60_000);
      expect(ctx.breaker.state).toBe('HALF_OPEN');
    });

    it('ignores trials admitted before a failed trial reopened the circuit', async () => {
      const ctx = setup({ successThreshold: 2 });
      await toHalfOpen(ctx);
      const trials = [deferred<string>(), deferred<string>(), deferred<string>()];
      const results = trials.map((trial) => ctx.breaker.execute(() => trial.promise));
      const settled = Promise.allSettled(results);
      trials[0]?.reject(new Error('still down'));
      await expect(results[0]).rejects.toThrow('still down');
      expect(ctx.breaker.state).toBe('OPEN');
      trials[1]?.resolve('late');
      trials[2]?.resolve('late');
      expect((await settled).map((outcome) => outcome.status)).toEqual([
        'rejected',
        'fulfilled',
        'fulfilled',
      ]);
      expect(ctx.breaker.state).toBe('OPEN');
      // The stale trials must not have consumed slots of the next half-open period either.
      ctx.clock.advance(60_000);
      const next = [deferred<string>(), deferred<string>(), deferred<string>()];
      const nextFns = next.map((trial) => jest.fn(() => trial.promise));
      const nextSettled = Promise.allSettled(nextFns.map((fn) => ctx.breaker.execute(fn)));
      expect(nextFns.map((fn) => fn.mock.calls.length)).toEqual([1, 1, 1]);
      next.forEach((trial) => trial.resolve('ok'));
      expect((await nextSettled).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
      expect(ctx.breaker.state).toBe('CLOSED');
    });
  });

  describe('isFailure', () => {
    const isFailure = (error: unknown) => !(error instanceof ProviderError && error.status < 500);

    it('rethrows a non-failure error but does not count it towards opening', async () => {
      const { breaker } = setup({ isFailure });
      const badRequest = new ProviderError(400);
      for (let i = 0; i < 10; i += 1) {
        await expect(breaker.execute(() => Promise.reject(badRequest))).rejects.toBe(badRequest);
      }
      expect(breaker.snapshot()).toMatchObject({
        state: 'CLOSED',
        totalCalls: 10,
        failedCalls: 0,
        consecutiveFailures: 0,
      });
    });

    it('receives the thrown error and treats a non-failure as a success (resets the streak)', async () => {
      const seen: unknown[] = [];
      const { breaker } = setup({
        isFailure: (error) => {
          seen.push(error);
          return isFailure(error);
        },
      });
      await failTimes(breaker, 4);
      const notFound = new ProviderError(404);
      await expect(breaker.execute(() => Promise.reject(notFound))).rejects.toBe(notFound);
      expect(seen.at(-1)).toBe(notFound);
      expect(breaker.snapshot().consecutiveFailures).toBe(0);
      await failTimes(breaker, 4);
      expect(breaker.state).toBe('CLOSED');
    });

    it('counts a non-failure trial as a success in HALF_OPEN', async () => {
      const ctx = setup({ isFailure });
      await toHalfOpen(ctx);
      for (let i = 0; i < 3; i += 1) {
        await expect(
          ctx.breaker.execute(() => Promise.reject(new ProviderError(422))),
        ).rejects.toBeInstanceOf(ProviderError);
      }
      expect(ctx.breaker.state).toBe('CLOSED');
    });

    it('still counts errors it classifies as failures', async () => {
      const { breaker } = setup({ isFailure });
      for (let i = 0; i < 5; i += 1) {
        await expect(
          breaker.execute(() => Promise.reject(new ProviderError(503))),
        ).rejects.toBeInstanceOf(ProviderError);
      }
      expect(breaker.state).toBe('OPEN');
    });

    it('counts the call as a failure when the predicate itself throws', async () => {
      const { breaker } = setup({
        failureThreshold: 1,
        isFailure: () => {
          throw new Error('bad predicate');
        },
      });
      await expect(breaker.execute(boom)).rejects.toThrow('boom');
      expect(breaker.state).toBe('OPEN');
    });
  });

  describe('abort signal', () => {
    it('passes the signal to the protected function', async () => {
      const { breaker } = setup();
      const controller = new AbortController();
      const fn = jest.fn((_signal: AbortSignal | undefined) => Promise.resolve(1));
      await breaker.execute(fn, { signal: controller.signal });
      expect(fn).toHaveBeenCalledWith(controller.signal);
    });

    it('rejects with the reason of an already aborted signal without calling or counting', async () => {
      const { breaker } = setup();
      const controller = new AbortController();
      const reason = new Error('user cancelled');
      controller.abort(reason);
      const fn = jest.fn(ok);
      await expect(breaker.execute(fn, { signal: controller.signal })).rejects.toBe(reason);
      expect(fn).not.toHaveBeenCalled();
      expect(breaker.snapshot().totalCalls).toBe(0);
    });

    it('treats a call rejected after its signal aborted as neither failure nor success', async () => {
      const { breaker } = setup();
      const abortedCall = async () => {
        const controller = new AbortController();
        const call = deferred<string>();
        const result = breaker.execute(() => call.promise, { signal: controller.signal });
        controller.abort();
        call.reject(new Error('aborted'));
        await expect(result).rejects.toThrow('aborted');
      };
      for (let i = 0; i < 5; i += 1) await abortedCall();
      expect(breaker.snapshot()).toMatchObject({ state: 'CLOSED', failedCalls: 0 });
      await failTimes(breaker, 4);
      await abortedCall();
      expect(breaker.snapshot().consecutiveFailures).toBe(4);
      await failTimes(breaker, 1);
      expect(breaker.state).toBe('OPEN');
    });

    it('frees the half-open slot of an aborted trial without closing or reopening', async () => {
      const ctx = setup({ halfOpenMaxCalls: 1, successThreshold: 1 });
      await toHalfOpen(ctx);
      const controller = new AbortController();
      const call = deferred<string>();
      const result = ctx.breaker.execute(() => call.promise, { signal: controller.signal });
      controller.abort();
      call.reject(new Error('aborted'));
      await expect(result).rejects.toThrow('aborted');
      expect(ctx.breaker.state).toBe('HALF_OPEN');
      await ctx.breaker.execute(ok);
      expect(ctx.breaker.state).toBe('CLOSED');
    });
  });

  describe('listeners', () => {
    it('stop hearing transitions once unsubscribed; duplicate subscriptions are independent', async () => {
      const { breaker } = setup({ failureThreshold: 1, timeoutSeconds: 1 });
      const heard: string[] = [];
      const listener = (_: string, from: CircuitState, to: CircuitState) =>
        heard.push(`${from}->${to}`);
      const first = breaker.onStateChange(listener);
      breaker.onStateChange(listener);
      first();
      first();
      await failTimes(breaker, 1);
      expect(heard).toEqual(['CLOSED->OPEN']);
    });

    it('isolates a throwing listener from the call and from other listeners', async () => {
      const reported: [unknown, string][] = [];
      const listenerError = new Error('listener broke');
      const { breaker, transitions } = setup({
        failureThreshold: 1,
        onListenerError: (error, name) => {
          reported.push([error, name]);
        },
      });
      breaker.onStateChange(() => {
        throw listenerError;
      });
      const after: string[] = [];
      breaker.onStateChange((_, __, to) => after.push(to));
      await expect(breaker.execute(boom)).rejects.toThrow('boom');
      expect(transitions).toHaveLength(1);
      expect(after).toEqual(['OPEN']);
      expect(reported).toEqual([[listenerError, 'openai']]);
      expect(breaker.state).toBe('OPEN');
    });

    it('sees a consistent state from inside a listener', async () => {
      const { breaker } = setup({ failureThreshold: 1 });
      const seen: unknown[] = [];
      breaker.onStateChange(() => seen.push(breaker.snapshot()));
      await failTimes(breaker, 1);
      expect(seen).toEqual([expect.objectContaining({ state: 'OPEN', openedAt: new Date(T0) })]);
    });
  });

  describe('snapshot', () => {
    it('reports the figures of a whole cycle', async () => {
      const ctx = setup({ failureThreshold: 2, successThreshold: 1, timeoutSeconds: 10 });
      expect(ctx.breaker.snapshot()).toEqual({
        name: 'openai',
        state: 'CLOSED',
        totalCalls: 0,
        failedCalls: 0,
        rejectedCalls: 0,
        consecutiveFailures: 0,
        openedAt: null,
      });
      await ctx.breaker.execute(ok);
      await failTimes(ctx.breaker, 2);
      await expect(ctx.breaker.execute(ok)).rejects.toBeInstanceOf(CircuitOpenError);
      expect(ctx.breaker.snapshot()).toEqual({
        name: 'openai',
        state: 'OPEN',
        totalCalls: 3,
        failedCalls: 2,
        rejectedCalls: 1,
        consecutiveFailures: 2,
        openedAt: new Date(T0),
      });
      ctx.clock.advance(10_000);
      await ctx.breaker.execute(ok);
      expect(ctx.breaker.snapshot()).toEqual({
        name: 'openai',
        state: 'CLOSED',
        totalCalls: 4,
        failedCalls: 2,
        rejectedCalls: 1,
        consecutiveFailures: 0,
        openedAt: null,
      });
    });
  });

  describe('options validation', () => {
    function configError(fn: () => unknown): CircuitBreakerConfigError {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(CircuitBreakerConfigError);
        return error as CircuitBreakerConfigError;
      }
      throw new Error('expected a CircuitBreakerConfigError');
    }

    it.each<[string, Record<string, unknown>]>([
      ['failureThreshold', { failureThreshold: 0 }],
      ['failureThreshold', { failureThreshold: 2.5 }],
      ['failureThreshold', { failureThreshold: '5' }],
      ['successThreshold', { successThreshold: -1 }],
      ['timeoutSeconds', { timeoutSeconds: 0 }],
      ['timeoutSeconds', { timeoutSeconds: Number.NaN }],
      ['halfOpenMaxCalls', { halfOpenMaxCalls: 0 }],
      ['isFailure', { isFailure: true }],
      ['clock', { clock: { now: 5 } }],
      ['onListenerError', { onListenerError: 'log' }],
    ])('rejects a bad %s with a typed error naming the field (%j)', (field, options) => {
      const error = configError(() => new CircuitBreaker('openai', options));
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.issues.map((issue) => issue.path)).toEqual([field]);
      expect(error.message).toContain(field);
      expect(error.message).toContain('openai');
    });

    it('lists every bad field at once and rejects unknown (misspelt) ones', () => {
      const error = configError(
        () =>
          new CircuitBreaker('openai', {
            failureThreshold: 0,
            halfOpenMaxCalls: 0,
            failureTreshold: 3,
          } as CircuitBreakerOptions),
      );
      const text = JSON.stringify(error.issues);
      expect(text).toContain('failureThreshold');
      expect(text).toContain('halfOpenMaxCalls');
      expect(text).toContain('failureTreshold');
    });

    it('rejects options that are not an object', () => {
      const error = configError(
        () => new CircuitBreaker('openai', 5 as unknown as CircuitBreakerOptions),
      );
      expect(error.issues).toHaveLength(1);
    });

    it.each(['', '   ', ' openai', 42])('rejects the name %j', (name) => {
      const error = configError(() => new CircuitBreaker(name as string));
      expect(error.issues.map((issue) => issue.path)).toEqual(['name']);
    });

    it('accepts a fractional timeout', async () => {
      const { breaker, clock } = setup({ timeoutSeconds: 0.25, failureThreshold: 1 });
      await failTimes(breaker, 1);
      clock.advance(249);
      expect(breaker.state).toBe('OPEN');
      clock.advance(1);
      expect(breaker.state).toBe('HALF_OPEN');
    });
  });
});
