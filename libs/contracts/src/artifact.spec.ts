import { CreateArtifactInputSchema, isBase64 } from './artifact';

describe('artifact content validation', () => {
  it('accepts padded standard base64 and refuses anything else', () => {
    expect(['', 'AA==', 'AAE=', 'AAEC', 'AAH/gA=='].map(isBase64)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['A', 'AA=', 'AA=A', '@@@@', 'AA-_', 'AAE=='].map(isBase64)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('checks multi-megabyte base64 without overflowing the stack', () => {
    const big = Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64');
    const parsed = CreateArtifactInputSchema.safeParse({
      name: 'big',
      visibility: 'public',
      encoding: 'base64',
      content: big,
    });
    expect(parsed.success).toBe(true);
  });
});
