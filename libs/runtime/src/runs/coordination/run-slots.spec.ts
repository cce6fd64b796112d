import { RunSlots } from './run-slots';

const never = new AbortController().signal;

describe('RunSlots', () => {
  it('admits up to the limit, then first come first served as slots free up', async () => {
    const slots = new RunSlots(2);
    const a = await slots.acquire(never);
    const b = await slots.acquire(never);
    const order: string[] = [];
    const c = slots.acquire(never).then((release) => (order.push('c'), release));
    const d = slots.acquire(never).then((release) => (order.push('d'), release));
    await Promise.resolve();
    expect({ active: slots.active, queued: slots.queued, order }).toEqual({
      active: 2,
      queued: 2,
      order: [],
    });
    b?.();
    const releaseC = await c;
    expect(order).toEqual(['c']);
    a?.();
    a?.(); // a second call of the same release frees nothing more
    const releaseD = await d;
    expect(order).toEqual(['c', 'd']);
    expect({ active: slots.active, queued: slots.queued }).toEqual({ active: 2, queued: 0 });
    releaseC?.();
    releaseD?.();
    expect(slots.active).toBe(0);
  });

  it('gives null to a waiter whose signal aborts, and skips it when a slot frees', async () => {
    const slots = new RunSlots(1);
    const first = await slots.acquire(never);
    const cancel = new AbortController();
    const cancelled = slots.acquire(cancel.signal);
    const next = slots.acquire(never);
    cancel.abort();
    expect(await cancelled).toBeNull();
    expect(slots.queued).toBe(1);
    first?.();
    expect(await next).toEqual(expect.any(Function));
    expect(await slots.acquire(AbortSignal.abort())).toBeNull();
  });

  it('rejects a limit that is not a positive integer', () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      expect(() => new RunSlots(limit)).toThrow('maxConcurrentRuns must be a positive integer');
    }
  });
});
