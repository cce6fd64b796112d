import { performance } from 'node:perf_hooks';
import { parseSseBlocks } from '@cognition/runtime/testing/http';

/** A JSON answer of the server; anything but 2xx throws with the status and body. */
export async function json(url: string, init?: RequestInit): Promise<Record<string, unknown>> {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * Reads an SSE body until an `event` frame of `type`, then drops the connection; returns the
 * frame's id and when it arrived (`performance.now()`). With `thenUntil`, reads on to that event
 * before dropping it (the time is still the first event's): a trial that waits for its run to
 * end cannot leave a model call of its own pending, to take the next trial's scripted reply.
 */
export async function readUntil(
  response: Response,
  type: string,
  timeoutMs: number,
  thenUntil?: string,
): Promise<{ id: string; at: number }> {
  if (!response.body) throw new Error('no body');
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void reader.cancel();
  }, timeoutMs);
  let buffer = '';
  /** The last event before the end, named in the error (e.g. an `error` event's code). */
  let last = 'none';
  let found: { id: string; at: number } | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      const awaited = found ? (thenUntil ?? type) : type;
      if (done) {
        // A stream the server ended and one that went silent are different defects.
        const how = timedOut
          ? `sent no \`${awaited}\` event within ${timeoutMs} ms`
          : `ended before a \`${awaited}\` event`;
        throw new Error(`the stream ${how} (last: ${last})`);
      }
      buffer += decoder.decode(value, { stream: true });
      const parsed = parseSseBlocks(buffer);
      buffer = parsed.rest;
      const named = parsed.frames.filter((frame) => frame.event !== undefined).at(-1);
      if (named) last = `${named.event ?? ''} ${(named.data ?? '').slice(0, 200)}`;
      const at = performance.now();
      const hit = parsed.frames.findIndex((frame) => frame.event === type);
      if (!found && hit >= 0) found = { id: parsed.frames[hit]?.id ?? '', at };
      const rest = found && hit >= 0 ? parsed.frames.slice(hit + 1) : parsed.frames;
      if (found && (!thenUntil || rest.some((frame) => frame.event === thenUntil))) {
        await reader.cancel();
        return found;
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
