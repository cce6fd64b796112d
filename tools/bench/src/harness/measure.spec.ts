import { sampleLatencies, sampleThroughput } from './measure';

describe('sampleLatencies', () => {
  it('warms up, then alternates contenders with a rotating order', async () => {
    const calls: string[] = [];
    const op = (name: string) => (i: number) => {
      calls.push(`${name}${i}`);
      return Promise.resolve();
    };
    const result = await sampleLatencies({ a: op('a'), b: op('b') }, { warmup: 1, samples: 3 });
    expect(calls).toEqual(['a0', 'b0', 'a1', 'b1', 'b2', 'a2', 'a3', 'b3']);
    expect(result.a).toHaveLength(3);
    expect(result.b).toHaveLength(3);
    expect([...result.a, ...result.b].every((ms) => ms >= 0 && Number.isFinite(ms))).toBe(true);
  });

  it('spreads the fewer samples of a slow contender evenly over the rounds', async () => {
    const calls: string[] = [];
    const op = (name: string) => (i: number) => {
      calls.push(`${name}${i}`);
      return Promise.resolve();
    };
    const result = await sampleLatencies(
      { a: op('a'), b: op('b') },
      { warmup: 1, samples: 4, fewer: { b: 2 } },
    );
    expect(calls).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'a3', 'b2', 'a4']);
    expect(result.a).toHaveLength(4);
    expect(result.b).toHaveLength(2);
  });

  it('propagates a failing operation', async () => {
    await expect(
      sampleLatencies({ a: () => Promise.reject(new Error('boom')) }, { warmup: 0, samples: 1 }),
    ).rejects.toThrow('boom');
  });
});

describe('sampleThroughput', () => {
  it('gives one rate per round and numbers calls continuously per contender', async () => {
    const indexes: Record<string, number[]> = { a: [], b: [] };
    const op = (name: string) => (i: number) => {
      indexes[name]?.push(i);
      return Promise.resolve();
    };
    const rates = await sampleThroughput(
      { a: op('a'), b: op('b') },
      { warmupOps: 2, rounds: 2, opsPerRound: 3 },
    );
    expect(indexes['a']).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(indexes['b']).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(rates.a).toHaveLength(2);
    expect(rates.b).toHaveLength(2);
    expect([...rates.a, ...rates.b].every((rate) => rate > 0)).toBe(true);
  });
});
