import type { ApiTestBed } from './test-bed';
import { collect } from './test-bed';

// Helpers shared by the issue-14 specs of this router.

export const ALICE = { user: 'alice' };
export const BOB = { user: 'bob' };

/** The value, failing the test when it is null or undefined. */
export function must<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error('expected a value');
  return value;
}

/** The text of every message the model was shown in its latest call (system prompt first). */
export function lastCallTexts(bed: ApiTestBed): string[] {
  const call = bed.model.calls[bed.model.calls.length - 1];
  return (call?.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : ''));
}

/** Sends one message (the model answers `reply`) and waits for its run to end. */
export async function turn(
  bed: ApiTestBed,
  sessionId: string,
  content: string,
  reply: string,
  scope = {},
): Promise<string> {
  bed.model.push({ text: reply });
  const sent = await bed.as(scope).messages.send({ sessionId, content });
  await collect(await bed.runs.events(sessionId, scope, { runId: sent.run.id }));
  return sent.message.id;
}

/** The contents of the session's messages in thread order. */
export async function contents(bed: ApiTestBed, sessionId: string, scope = {}): Promise<string[]> {
  const page = await bed.as(scope).messages.list({ sessionId, limit: 500 });
  return page.messages.map((m) => m.content);
}
