import { parseSseBlocks } from '@cognition/runtime/testing/http';
import { json } from '../../support/rest-sse';

/** What one load worker did, counted per action (errors by message). */
export interface LoadCounts {
  actions: Map<string, number>;
  errors: Map<string, number>;
}

/**
 * Lets the sampler hold the load between actions: `pause` stops new actions and resolves once
 * none is in flight (a quiesced instant, for a reading of what outlives the work), `resume`
 * lets the workers go on.
 */
export class LoadGate {
  private held: Promise<void> | null = null;
  private release: (() => void) | null = null;
  private busy = 0;
  private idle: (() => void)[] = [];

  /** Waits while paused, then counts the caller's action as in flight. */
  async enter(): Promise<void> {
    while (this.held) await this.held;
    this.busy += 1;
  }

  leave(): void {
    this.busy -= 1;
    if (this.busy === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  async pause(): Promise<void> {
    this.held ??= new Promise<void>((resolve) => {
      this.release = resolve;
    });
    if (this.busy > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  resume(): void {
    const release = this.release;
    this.held = null;
    this.release = null;
    release?.();
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Reads an SSE response; `stopAfterTokens` cancels it after that many token events. */
async function readEvents(
  response: Response,
  stopAfterTokens?: number,
): Promise<{ lastId: string; last: string; tokens: number }> {
  if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let lastId = '';
  let last = '';
  let tokens = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { lastId, last, tokens };
    buffer += decoder.decode(value, { stream: true });
    const parsed = parseSseBlocks(buffer);
    buffer = parsed.rest;
    for (const frame of parsed.frames) {
      if (frame.event === undefined) continue;
      lastId = frame.id ?? lastId;
      last = frame.event;
      if (frame.event === 'token') tokens += 1;
    }
    if (stopAfterTokens !== undefined && tokens >= stopAfterTokens) {
      await reader.cancel();
      return { lastId, last, tokens };
    }
  }
}

function send(url: string, sessionId: string, content: string): Promise<Response> {
  return fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ content }),
  });
}

async function expectEnd(
  result: Promise<{ last: string }>,
  ends: readonly string[] = ['done'],
): Promise<void> {
  const { last } = await result;
  if (!ends.includes(last)) throw new Error(`a stream ended with ${last || 'nothing'}`);
}

async function ok(response: Promise<Response>, what: string): Promise<void> {
  const answer = await response;
  await answer.arrayBuffer();
  if (!answer.ok) throw new Error(`${what} answered ${answer.status}`);
}

/**
 * The soak's mixed load on one server: each action picked by weight — a turn (a tool call and a
 * streamed answer), a reconnect mid-answer with `Last-Event-ID`, an abort mid-answer, reads
 * (lists, search, analytics, history), an artifact write, and an idle follower of a slow run.
 * A worker keeps one session for 10 turns, then deletes it and starts another, so the database
 * stays about the same size and session creation and deletion are part of the load.
 */
export async function loadWorker(
  url: string,
  until: () => boolean,
  counts: LoadCounts,
  gate: LoadGate = new LoadGate(),
): Promise<void> {
  let sessionId = '';
  let turns = 0;
  const fresh = async (): Promise<void> => {
    if (sessionId !== '')
      await ok(fetch(`${url}/sessions/${sessionId}`, { method: 'DELETE' }), 'delete');
    sessionId = String((await json(`${url}/sessions`, { method: 'POST', body: '{}' }))['id']);
    turns = 0;
  };
  const actions: [number, string, () => Promise<void>][] = [
    [40, 'turn', async () => expectEnd(readEvents(await send(url, sessionId, 'work')))],
    [
      10,
      'reconnect',
      async () => {
        const first = await readEvents(await send(url, sessionId, 'long answer'), 2);
        const again = fetch(`${url}/sessions/${sessionId}/events`, {
          headers: { 'Last-Event-ID': first.lastId },
        });
        await expectEnd(readEvents(await again));
      },
    ],
    [
      10,
      'abort',
      async () => {
        const stream = await send(url, sessionId, 'long answer');
        const reading = readEvents(stream);
        await ok(fetch(`${url}/sessions/${sessionId}/abort`, { method: 'POST' }), 'abort');
        await expectEnd(reading, ['done', 'error']);
      },
    ],
    [
      25,
      'reads',
      async () => {
        await ok(fetch(`${url}/sessions?limit=20`), 'list sessions');
        await ok(fetch(`${url}/sessions/${sessionId}/messages`), 'list messages');
        await ok(fetch(`${url}/messages/search?q=answer`), 'search');
        await ok(fetch(`${url}/sessions/stats`), 'stats');
        await ok(fetch(`${url}/sessions/${sessionId}/activity`), 'activity');
      },
    ],
    [
      10,
      'artifact',
      () =>
        ok(
          fetch(`${url}/artifacts`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({
              name: `notes-${Date.now()}-${Math.random().toString(36).slice(2)}.md`,
              content: 'x'.repeat(2048),
              session_id: sessionId,
            }),
          }),
          'artifact',
        ),
    ],
    [
      5,
      'idle stream',
      async () => {
        // The sender leaves after the first token; a follower joins with its cursor (replay,
        // then live) and sits on the slow run to its end.
        const owner = await readEvents(await send(url, sessionId, 'slow answer'), 1);
        const follower = await fetch(`${url}/sessions/${sessionId}/events`, {
          headers: { 'Last-Event-ID': owner.lastId },
        });
        await expectEnd(readEvents(follower));
      },
    ],
  ];
  const total = actions.reduce((s, [w]) => s + w, 0);
  while (!until()) {
    await gate.enter();
    try {
      if (sessionId === '' || turns >= 10) await fresh();
      let pick = Math.random() * total;
      const action = actions.find(([weight]) => (pick -= weight) < 0) ?? actions[0];
      if (!action) break;
      await action[2]();
      turns += 1;
      bump(counts.actions, action[1]);
    } catch (error) {
      bump(counts.errors, error instanceof Error ? error.message : String(error));
      // A broken session is left behind (deleted at the next rotation) rather than reused.
      turns = 10;
    } finally {
      gate.leave();
    }
  }
  if (sessionId !== '')
    await fetch(`${url}/sessions/${sessionId}`, { method: 'DELETE' }).catch(() => undefined);
}
