/**
 * One Server-Sent Events block as a client reads it: fields of the block, or a comment line
 * (`: ping`), or the `retry:` hint.
 */
export interface SseFrame {
  id?: string;
  event?: string;
  /** The raw `data:` text (lines joined with `\n`). */
  data?: string;
  retry?: number;
  comment?: string;
}

/** Parses complete blocks from `buffer`; returns them and the unparsed rest. */
export function parseSseBlocks(buffer: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const frame: SseFrame = {};
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        frame.comment = line.slice(1).trim();
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') frame.id = value;
      else if (field === 'event') frame.event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry') frame.retry = Number(value);
    }
    if (data.length > 0) frame.data = data.join('\n');
    frames.push(frame);
  }
  return { frames, rest };
}

export interface SseRead {
  frames: SseFrame[];
  /** true when `stopWhen` ended the read (the connection was dropped by the client). */
  dropped: boolean;
}

/**
 * Reads an SSE response body. With `stopWhen`, drops the connection as soon as a frame matches
 * (a client going away mid-stream); otherwise reads to the end.
 */
export async function readSse(
  response: Response,
  stopWhen?: (frame: SseFrame, frames: SseFrame[]) => boolean,
): Promise<SseRead> {
  const body = response.body;
  if (!body) return { frames: [], dropped: false };
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const frames: SseFrame[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { frames, dropped: false };
    buffer += decoder.decode(value, { stream: true });
    const parsed = parseSseBlocks(buffer);
    buffer = parsed.rest;
    for (const frame of parsed.frames) {
      frames.push(frame);
      if (stopWhen?.(frame, frames)) {
        await reader.cancel();
        return { frames, dropped: true };
      }
    }
  }
}

/**
 * The agent events of a read: `{ id, event, data }` with `data` parsed into the event's fields,
 * without the `at` (emission time) every frame's data carries: a time is never asserted, and
 * specs compare the fields. `timesOf` reads the times.
 */
export function eventsOf(
  frames: readonly SseFrame[],
): { id: string; event: string; data: Record<string, unknown> }[] {
  return frames
    .filter((frame) => frame.event !== undefined)
    .map((frame) => {
      const { at: _at, ...data } = JSON.parse(frame.data ?? '{}') as Record<string, unknown>;
      return { id: frame.id ?? '', event: frame.event ?? '', data };
    });
}

/** Each agent event's id and `at` (the time it was emitted; null when a frame has none). */
export function timesOf(frames: readonly SseFrame[]): { id: string; at: string | null }[] {
  return frames
    .filter((frame) => frame.event !== undefined)
    .map((frame) => {
      const { at } = JSON.parse(frame.data ?? '{}') as { at?: unknown };
      return { id: frame.id ?? '', at: typeof at === 'string' ? at : null };
    });
}
