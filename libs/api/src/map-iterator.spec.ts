import { mapAsyncIterator } from './map-iterator';

describe('mapAsyncIterator', () => {
  it('maps each value, ends with the source, and returning early releases the source', async () => {
    let released = false;
    async function* source(): AsyncGenerator<number, void, undefined> {
      try {
        for (let i = 1; ; i += 1) yield await Promise.resolve(i);
      } finally {
        released = true;
      }
    }
    const seen: string[] = [];
    for await (const value of mapAsyncIterator(source(), (n) => `#${n}`)) {
      seen.push(value);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(['#1', '#2', '#3']);
    expect(released).toBe(true);

    async function* two(): AsyncGenerator<number, void, undefined> {
      yield await Promise.resolve(1);
      yield 2;
    }
    const all: number[] = [];
    for await (const value of mapAsyncIterator(two(), (n) => n * 10)) all.push(value);
    expect(all).toEqual([10, 20]);
  });

  it('passes a throw() to the source, which fails the iteration', async () => {
    let released = false;
    async function* source(): AsyncGenerator<number, void, undefined> {
      try {
        yield await Promise.resolve(1);
        yield 2;
      } finally {
        released = true;
      }
    }
    const mapped = mapAsyncIterator(source(), (n) => n);
    await mapped.next();
    await expect(mapped.throw(new Error('stop'))).rejects.toThrow('stop');
    expect(released).toBe(true);
  });
});
