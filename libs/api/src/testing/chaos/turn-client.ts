import { parseSseBlocks } from '@cognition/runtime/testing/http';
import { answerOf, turnMessage } from './model';
import { RunStream } from './stream-check';
import type { StreamEvent } from './stream-check';

/** One turn as a client under chaos sends and follows it. */
export interface TurnRecord {
  session: string;
  turn: string;
  /** The send answered 200 with a run id: the message was acknowledged. */
  acknowledged: boolean;
  runId: string | null;
  sendAttempts: number;
  /** Connections opened to follow the run after the first one ended early. */
  reconnects: number;
  /** Statuses other than 200 the sends and reconnections met (e.g. `503`, `reset`). */
  refusals: Record<string, number>;
  stream: RunStream | null;
  /** The stream's terminal event never came before the deadline. */
  stuck: boolean;
}

const RETRYABLE = new Set([409, 425, 429, 500, 502, 503, 504]);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads SSE events from `response` into `stream` until it ends or breaks; false on a break. */
async function follow(response: Response, stream: RunStream): Promise<boolean> {
  const body = response.body;
  if (!body) return true;
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return true;
      buffer += decoder.decode(value, { stream: true });
      const parsed = parseSseBlocks(buffer);
      buffer = parsed.rest;
      for (const frame of parsed.frames) {
        if (frame.event === undefined) continue;
        const event: StreamEvent = {
          id: frame.id ?? '',
          event: frame.event,
          data: JSON.parse(frame.data ?? '{}') as Record<string, unknown>,
        };
        stream.add(event);
        if (stream.terminal) {
          await reader.cancel().catch(() => undefined);
          return true;
        }
      }
    }
  } catch {
    return false;
  }
}

function count(record: TurnRecord, what: string): void {
  record.refusals[what] = (record.refusals[what] ?? 0) + 1;
}

/**
 * Sends the turn's message with its key as `idempotency_key` until a send is acknowledged (a
 * resend after a lost answer streams the first run again instead of storing the message twice),
 * reads the run's stream and, whenever a connection ends before the terminal event, reconnects
 * with `Last-Event-ID` through the balancer — until the terminal event or `deadline` (ms since
 * the epoch).
 */
export async function runTurn(options: {
  url: string;
  session: string;
  turn: string;
  answerWords: number;
  deadline: number;
}): Promise<TurnRecord> {
  const { url, session, turn } = options;
  const record: TurnRecord = {
    session,
    turn,
    acknowledged: false,
    runId: null,
    sendAttempts: 0,
    reconnects: 0,
    refusals: {},
    stream: null,
    stuck: false,
  };
  let first: Response | null = null;
  while (!first && Date.now() < options.deadline) {
    record.sendAttempts += 1;
    try {
      const response = await fetch(`${url}/sessions/${session}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: turnMessage(turn), idempotency_key: turn }),
        signal: AbortSignal.timeout(Math.max(1, options.deadline - Date.now())),
      });
      const runId = response.headers.get('x-cognition-run-id');
      if (response.status === 200 && runId) {
        record.acknowledged = true;
        record.runId = runId;
        first = response;
        break;
      }
      count(record, String(response.status));
      await response.body?.cancel();
      if (!RETRYABLE.has(response.status)) break;
    } catch {
      count(record, 'reset');
    }
    await pause(250);
  }
  if (!first || !record.runId) return record;
  const stream = new RunStream(record.runId);
  record.stream = stream;
  await follow(first, stream);
  while (!stream.terminal && Date.now() < options.deadline) {
    record.reconnects += 1;
    try {
      const response = await fetch(`${url}/sessions/${session}/events`, {
        headers: { 'last-event-id': stream.lastId ?? `${record.runId}:000000000` },
        signal: AbortSignal.timeout(Math.max(1, options.deadline - Date.now())),
      });
      if (response.status === 200) {
        await follow(response, stream);
        if (stream.terminal) break;
      } else {
        count(record, String(response.status));
        await response.body?.cancel();
      }
    } catch {
      count(record, 'reset');
    }
    await pause(250);
  }
  record.stuck = !stream.terminal;
  stream.checkAnswer(answerOf(turn, options.answerWords));
  return record;
}
