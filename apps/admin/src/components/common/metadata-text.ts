/** `{a: '1'}` -> `a=1` lines, sorted by key. */
export function formatMetadata(metadata: Record<string, string>): string {
  return Object.entries(metadata)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

/** The inverse of {@link formatMetadata}; blank lines are ignored, a line without `=` is a problem. */
export function parseMetadata(
  text: string,
): { ok: true; metadata: Record<string, string> } | { ok: false; problem: string } {
  const metadata: Record<string, string> = {};
  const lines = text.split('\n');
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const at = line.indexOf('=');
    if (at <= 0)
      return { ok: false, problem: `Line ${index + 1}: expected key=value, got "${line}"` };
    const key = line.slice(0, at).trim();
    if (key in metadata) return { ok: false, problem: `Line ${index + 1}: "${key}" appears twice` };
    metadata[key] = line.slice(at + 1).trim();
  }
  return { ok: true, metadata };
}
