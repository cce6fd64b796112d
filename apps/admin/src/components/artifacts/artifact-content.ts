import type { ArtifactWithContent } from '@cognition/contracts';

/** Characters of an artifact version shown on the page; the rest is left to the API. */
const PREVIEW_MAX_CHARS = 20_000;

export type ContentPreview =
  | { kind: 'text'; text: string; hiddenChars: number }
  | { kind: 'binary'; size: number; contentType: string };

/**
 * What the page shows of one version: text up to `PREVIEW_MAX_CHARS` (saying how much is left
 * out), or for bytes (base64 on the wire) only what they are — decoding arbitrary bytes as text
 * would show noise.
 */
export function previewOf(
  version: Pick<ArtifactWithContent, 'content' | 'encoding' | 'size' | 'contentType'>,
  max: number = PREVIEW_MAX_CHARS,
): ContentPreview {
  if (version.encoding === 'base64') {
    return { kind: 'binary', size: version.size, contentType: version.contentType };
  }
  const text = version.content.slice(0, max);
  return { kind: 'text', text, hiddenChars: version.content.length - text.length };
}

/** A byte count as people read it. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
