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

  it.each([
    [['--only', '5,x'], '--only'],
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
