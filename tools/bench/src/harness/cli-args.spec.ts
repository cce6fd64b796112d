import { BenchArgsError, parseBenchArgs } from './cli-args';

const DOCS = '/repo/docs/benchmarks.md';

describe('parseBenchArgs', () => {
  it('runs everything and writes the docs by default', () => {
    expect(parseBenchArgs([], DOCS)).toEqual({
      smoke: false,
      only: undefined,
      docsPath: DOCS,
      profileDir: undefined,
      help: false,
    });
  });

  it('writes no docs on a smoke run unless --docs names a file', () => {
    expect(parseBenchArgs(['--smoke'], DOCS).docsPath).toBeUndefined();
    expect(parseBenchArgs(['--smoke', '--docs', '/tmp/x.md'], DOCS).docsPath).toBe('/tmp/x.md');
    expect(parseBenchArgs(['--no-docs'], DOCS).docsPath).toBeUndefined();
  });

  it('parses --only in both spellings, sorted and without duplicates', () => {
    expect(parseBenchArgs(['--only', '6,5,6'], DOCS).only).toEqual([5, 6]);
    expect(parseBenchArgs(['--only=7'], DOCS).only).toEqual([7]);
    expect(parseBenchArgs(['--profile', 'p'], DOCS).profileDir).toBe('p');
  });

  it('parses --minutes (the soak length)', () => {
    expect(parseBenchArgs(['--only', 'soak', '--minutes', '10'], DOCS).minutes).toBe(10);
    expect(parseBenchArgs(['--minutes=0.5'], DOCS).minutes).toBe(0.5);
    expect(parseBenchArgs([], DOCS).minutes).toBeUndefined();
    expect(() => parseBenchArgs(['--minutes', 'long'], DOCS)).toThrow(
      new BenchArgsError('--minutes', 'expected minutes between 0 and 1440, got "long"'),
    );
    expect(() => parseBenchArgs(['--minutes', '0'], DOCS)).toThrow(BenchArgsError);
  });

  it('parses benchmark names in --only (numbers first, then names)', () => {
    expect(parseBenchArgs(['--only', 'fuzz'], DOCS).only).toEqual(['fuzz']);
    expect(parseBenchArgs(['--only', 'fuzz,6,fuzz'], DOCS).only).toEqual([6, 'fuzz']);
  });

  it.each([
    [['--only', '5,x'], '--only'],
    [['--only', 'Fuzz'], '--only'],
    [['--only'], '--only'],
    [['--only', '--smoke'], '--only'],
    [['--docs='], '--docs'],
    [['--fast'], '--fast'],
    [['--no-docs', '--docs', 'a.md'], '--no-docs'],
  ])('rejects %j naming %s', (argv, option) => {
    let error: unknown;
    try {
      parseBenchArgs(argv, DOCS);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BenchArgsError);
    expect((error as BenchArgsError).option).toBe(option);
    expect((error as BenchArgsError).message.startsWith(`${option}: `)).toBe(true);
  });
});
