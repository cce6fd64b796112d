import { describe, expect, it } from 'vitest';
import { parseScopes } from '../../credentials';
import { formatMetadata, parseMetadata } from './metadata-text';

describe('metadata as key=value lines', () => {
  it('round-trips, sorted by key, values may hold "="', () => {
    const metadata = { team: 'alpha', query: 'a=b', env: 'prod' };
    expect(formatMetadata(metadata)).toBe('env=prod\nquery=a=b\nteam=alpha');
    expect(parseMetadata(formatMetadata(metadata))).toEqual({ ok: true, metadata });
  });

  it('names the line of a problem: no "=", an empty key, a repeated key', () => {
    expect(parseMetadata('a=1\nnonsense')).toEqual({
      ok: false,
      problem: 'Line 2: expected key=value, got "nonsense"',
    });
    expect(parseMetadata('=1')).toEqual({
      ok: false,
      problem: 'Line 1: expected key=value, got "=1"',
    });
    expect(parseMetadata('a=1\n\na=2')).toEqual({
      ok: false,
      problem: 'Line 3: "a" appears twice',
    });
  });
});

describe('parseScopes', () => {
  it('reads "k=v, k=v", lower-cases keys and drops blank pairs', () => {
    expect(parseScopes('User=alice, project=p1, , x=')).toEqual({ user: 'alice', project: 'p1' });
  });
});
