import { CircuitBreaker } from './circuit-breaker';
import { CircuitBreakerConfigError } from './errors';
import type { CircuitBreakerRegistryOptions } from './registry';
import { CircuitBreakerRegistry } from './registry';
import type { CircuitState } from './types';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');

function setup() {
  let now = T0;
  const clock = { now: () => now };
  const registry = new CircuitBreakerRegistry({ defaults: { clock } });
  return {
    registry,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

async function failTimes(breaker: CircuitBreaker, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
  }
}

function configError(fn: () => unknown): CircuitBreakerConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CircuitBreakerConfigError);
    return error as CircuitBreakerConfigError;
  }
  throw new Error('expected a CircuitBreakerConfigError');
}

describe('CircuitBreakerRegistry', () => {
  it('creates a breaker once per name and returns it on every get', () => {
    const { registry } = setup();
    expect(registry.has('openai')).toBe(false);
    const first = registry.get('openai', { failureThreshold: 2 });
    expect(first).toBeInstanceOf(CircuitBreaker);
    expect(registry.has('openai')).toBe(true);
    expect(registry.get('openai')).toBe(first);
    expect(registry.get('openai', { failureThreshold: 9 })).toBe(first);
    expect(first.options.failureThreshold).toBe(2);
    expect(registry.get('docker')).not.toBe(first);
  });

  it('applies registry defaults under the options given to get', () => {
    const registry = new CircuitBreakerRegistry({
      defaults: { failureThreshold: 2, timeoutSeconds: 5 },
    });
    expect(registry.get('a').options).toMatchObject({
      failureThreshold: 2,
      timeoutSeconds: 5,
      successThreshold: 3,
      halfOpenMaxCalls: 3,
    });
    expect(registry.get('b', { timeoutSeconds: 1 }).options).toMatchObject({
      failureThreshold: 2,
      timeoutSeconds: 1,
    });
  });

  it('keeps breakers independent of each other', async () => {
    const { registry } = setup();
    const openai = registry.get('openai', { failureThreshold: 1 });
    const docker = registry.get('docker', { failureThreshold: 1 });
    await failTimes(openai, 1);
    expect(openai.state).toBe('OPEN');
    expect(docker.state).toBe('CLOSED');
    await expect(docker.execute(() => Promise.resolve('up'))).resolves.toBe('up');
  });

  it('reports snapshots of every breaker in creation order', async () => {
    const { registry, advance } = setup();
    const openai = registry.get('openai', { failureThreshold: 2 });
    const docker = registry.get('docker');
    advance(1000);
    await failTimes(openai, 2);
    await expect(openai.execute(() => Promise.resolve(1))).rejects.toMatchObject({
      code: 'CIRCUIT_OPEN',
    });
    await docker.execute(() => Promise.resolve(1));
    await failTimes(docker, 1);
    expect(registry.snapshots()).toEqual([
      {
        name: 'openai',
        state: 'OPEN',
        totalCalls: 2,
        failedCalls: 2,
        rejectedCalls: 1,
        consecutiveFailures: 2,
        openedAt: new Date(T0 + 1000),
      },
      {
        name: 'docker',
        state: 'CLOSED',
        totalCalls: 2,
        failedCalls: 1,
        rejectedCalls: 0,
        consecutiveFailures: 1,
        openedAt: null,
      },
    ]);
    advance(60_000);
    expect(registry.snapshots().map((s) => s.state)).toEqual(['HALF_OPEN', 'CLOSED']);
  });

  it('tells listeners about transitions of every breaker, including later ones', async () => {
    const { registry, advance } = setup();
    const heard: [string, CircuitState, CircuitState][] = [];
    const early = registry.get('early', { failureThreshold: 1, successThreshold: 1 });
    const unsubscribe = registry.onStateChange((name, from, to) => heard.push([name, from, to]));
    const late = registry.get('late', { failureThreshold: 1 });
    await failTimes(early, 1);
    await failTimes(late, 1);
    advance(60_000);
    await early.execute(() => Promise.resolve('ok'));
    expect(heard).toEqual([
      ['early', 'CLOSED', 'OPEN'],
      ['late', 'CLOSED', 'OPEN'],
      ['early', 'OPEN', 'HALF_OPEN'],
      ['early', 'HALF_OPEN', 'CLOSED'],
    ]);
    unsubscribe();
    registry.snapshots();
    expect(heard).toHaveLength(4);
  });

  it('isolates a throwing registry listener and reports it through onListenerError', async () => {
    const reported: string[] = [];
    const registry = new CircuitBreakerRegistry({
      defaults: { failureThreshold: 1, onListenerError: (_, name) => reported.push(name) },
    });
    registry.onStateChange(() => {
      throw new Error('listener broke');
    });
    const heard: string[] = [];
    registry.onStateChange((name) => heard.push(name));
    await failTimes(registry.get('openai'), 1);
    expect(heard).toEqual(['openai']);
    expect(reported).toEqual(['openai']);
  });

  describe('validation', () => {
    it('rejects invalid defaults with the field path under defaults', () => {
      const error = configError(
        () => new CircuitBreakerRegistry({ defaults: { failureThreshold: 0 } }),
      );
      expect(error.issues.map((issue) => issue.path)).toEqual(['defaults.failureThreshold']);
    });

    it('rejects unknown registry options', () => {
      const error = configError(
        () =>
          new CircuitBreakerRegistry({
            failureThreshold: 1,
          } as unknown as CircuitBreakerRegistryOptions),
      );
      expect(error.issues.map((issue) => issue.path)).toEqual(['failureThreshold']);
    });

    it('rejects invalid options and names on get, for new and existing breakers alike', () => {
      const { registry } = setup();
      expect(
        configError(() => registry.get('openai', { halfOpenMaxCalls: 0 })).issues.map(
          (i) => i.path,
        ),
      ).toEqual(['halfOpenMaxCalls']);
      expect(registry.has('openai')).toBe(false);
      registry.get('openai');
      expect(
        configError(() => registry.get('openai', { timeoutSeconds: -1 })).issues.map((i) => i.path),
      ).toEqual(['timeoutSeconds']);
      expect(configError(() => registry.get('')).issues.map((i) => i.path)).toEqual(['name']);
    });
  });
});
