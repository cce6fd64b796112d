import { describe, expect, it } from 'vitest';
import { previewOf, sizeText } from './artifact-content';

describe('artifact content on the page', () => {
  it('shows text whole up to the limit, saying how much is left out', () => {
    const short = {
      content: '# Report',
      encoding: 'utf8',
      size: 8,
      contentType: 'text/markdown',
    } as const;
    expect(previewOf(short)).toEqual({ kind: 'text', text: '# Report', hiddenChars: 0 });
    expect(previewOf({ ...short, content: 'abcdefghij' }, 4)).toEqual({
      kind: 'text',
      text: 'abcd',
      hiddenChars: 6,
    });
  });

  it('never decodes bytes as text', () => {
    expect(
      previewOf({ content: 'iVBORw0K', encoding: 'base64', size: 6, contentType: 'image/png' }),
    ).toEqual({ kind: 'binary', size: 6, contentType: 'image/png' });
  });

  it('reads sizes in B, KB and MB', () => {
    expect([sizeText(12), sizeText(2048), sizeText(3 * 1024 * 1024)]).toEqual([
      '12 B',
      '2.0 KB',
      '3.0 MB',
    ]);
  });
});
