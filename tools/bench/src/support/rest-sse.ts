import { performance } from 'node:perf_hooks';
import { parseSseBlocks } from '@cognition/runtime/testing';

/** A JSON answer of the server; anything but 2xx throws with the status and body. */
export async function json(url: string, init?: RequestInit): Promise<Record<string, unknown>> {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * Reads an SSE body until an `event` frame of `type`, then drops the connection; returns the
 * frame's id and when it arrived (`performance.now()`).
 */
export async function readUntil(
  response: Response,
  type: string,
  timeoutMs: number,
): Promise<{ id: string; at: number }> {
  if (!response.body) throw new Error('no body');
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  let buffer = '';
  /** The last event before the end, named in the error (e.g. an `error` event's code). */
  let last = 'none';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before a \`${type}\` event (last: ${last})`);
      buffer += decoder.decode(value, { stream: true });
      const parsed = parseSseBlocks(buffer);
      buffer = parsed.rest;
      const named = parsed.frames.filter((frame) => frame.event !== undefined).at(-1);
      if (named) last = `${named.event ?? ''} ${(named.data ?? '').slice(0, 200)}`;
      const hit = parsed.frames.find((frame) => frame.event === type);
      if (hit) {
        const at = performance.now();
        await reader.cancel();
        return { id: hit.id ?? '', at };
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
