import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import type { TestApp } from '../../../testing/test-app';
import type { ListeningTestApp } from '../../../testing/listen';
import { listenTestApp } from '../../../testing/listen';

type Json = Record<string, unknown>;

let served: ListeningTestApp;
let t: TestApp;
let base: string;

beforeAll(async () => {
  served = await listenTestApp();
  ({ t, base } = served);
});

afterAll(() => served.close());

const post = (path: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

async function guardedSession(): Promise<string> {
  const res = await post('/sessions', { agent_name: 'gatekeeper' });
  expect(res.status).toBe(201);
  return String(((await res.json()) as Json).id);
}

/** Sends a message whose run pauses on `calls`; returns the run id and the interrupt event. */
async function pausedRun(sessionId: string, calls: { name: string; args: Json; id: string }[]) {
  t.model.push({ toolCalls: calls });
  const res = await post(`/sessions/${sessionId}/messages`, { content: 'do it' });
  expect(res.status).toBe(200);
  const events = eventsOf((await readSse(res)).frames);
  const last = events[events.length - 1];
  expect(last?.event).toBe('interrupt');
  return { runId: String(last?.data['run_id']), interrupt: last, events };
}

const WRITE = { name: 'write_file', args: { path: 'notes.txt', content: 'hi' }, id: 'call_w' };
const EXEC = { name: 'execute', args: { command: 'rm -rf build' }, id: 'call_x' };

describe('human in the loop over REST', () => {
  it('pauses, lists the run as requires_action, refuses a new message, and resumes on approve', async () => {
    const id = await guardedSession();
    const { runId, interrupt } = await pausedRun(id, [WRITE]);
    expect(interrupt?.data).toEqual({
      run_id: runId,
      tool_calls: [{ ...WRITE, allowed: ['approve', 'edit', 'reject'] }],
      allowed: { call_w: ['approve', 'edit', 'reject'] },
    });

    const listed = (await (
      await fetch(`${base}/sessions/${id}/runs?status=requires_action`)
    ).json()) as { runs: Json[] };
    expect(listed.runs).toHaveLength(1);
    expect(listed.runs[0]).toMatchObject({
      id: runId,
      status: 'requires_action',
      pending_action: { tool_calls: [{ id: 'call_w', name: 'write_file' }] },
    });
    const session = (await (await fetch(`${base}/sessions/${id}`)).json()) as Json;
    expect(session['pending_action']).toEqual({
      run_id: runId,
      tool_calls: [{ ...WRITE, allowed: ['approve', 'edit', 'reject'] }],
    });
    const bad = await fetch(`${base}/sessions/${id}/runs?status=waiting`);
    expect(bad.status).toBe(422);

    const refused = await post(`/sessions/${id}/messages`, { content: 'and more' });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { detail: string }).detail).toContain(
      `/sessions/${id}/runs/${runId}/resume`,
    );

    t.model.push({ text: ['Saved', '.'] });
    const resumed = await post(`/sessions/${id}/runs/${runId}/resume`, {
      decisions: [{ tool_call_id: 'call_w', type: 'approve' }],
    });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toBe('text/event-stream');
    const after = eventsOf((await readSse(resumed)).frames);
    expect(after.map((e) => e.event)).toEqual([
      'reconnected',
      'status',
      'tool_result',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(after.every((e) => e.id.startsWith(`${runId}:`))).toBe(true);
    expect(after.find((e) => e.event === 'tool_result')?.data).toMatchObject({ exit_code: 0 });
    const run = (await (await fetch(`${base}/sessions/${id}/runs/${runId}`)).json()) as Json;
    expect(run).toMatchObject({ status: 'completed', pending_action: null });
    const settled = (await (await fetch(`${base}/sessions/${id}`)).json()) as Json;
    expect(settled['pending_action']).toBeNull();
  });

  it('rejects with the message the model then gets as the result', async () => {
    const id = await guardedSession();
    const { runId } = await pausedRun(id, [EXEC]);
    t.model.push({ text: 'Understood, nothing deleted.' });
    const res = await post(`/sessions/${id}/runs/${runId}/resume`, {
      decisions: [{ tool_call_id: 'call_x', type: 'reject', message: 'Not on a Friday.' }],
    });
    const after = eventsOf((await readSse(res)).frames);
    expect(after.find((e) => e.event === 'tool_result')?.data).toEqual({
      tool_call_id: 'call_x',
      output: 'Not on a Friday.',
      exit_code: 126,
    });
    expect(after.at(-1)?.event).toBe('done');
  });

  it('answers bad decisions with 422 naming the field, other runs with 404, settled ones with 409', async () => {
    const id = await guardedSession();
    const { runId } = await pausedRun(id, [EXEC]);
    const issues = async (body: unknown) => {
      const res = await post(`/sessions/${id}/runs/${runId}/resume`, body);
      expect(res.status).toBe(422);
      const error = (await res.json()) as { code: string; errors: { path: string }[] };
      expect(error.code).toBe('VALIDATION_ERROR');
      return error.errors.map((issue) => issue.path);
    };
    expect(
      await issues({ decisions: [{ tool_call_id: 'call_x', type: 'edit', args: {} }] }),
    ).toEqual(['body.decisions.0.type']);
    expect(await issues({ decisions: [{ tool_call_id: 'nope', type: 'approve' }] })).toEqual([
      'body.decisions.0.tool_call_id',
      'body.decisions',
    ]);
    expect(await issues({ decisions: [{ tool_call_id: 'call_x', type: 'maybe' }] })).toEqual([
      'body.decisions.0.type',
    ]);
    expect(await issues({ decisions: [] })).toEqual(['body.decisions']);

    const other = await guardedSession();
    expect((await post(`/sessions/${other}/runs/${runId}/resume`, { decisions: [] })).status).toBe(
      422,
    );
    const decisions = [{ tool_call_id: 'call_x', type: 'approve' }];
    expect((await post(`/sessions/${other}/runs/${runId}/resume`, { decisions })).status).toBe(404);

    const abort = await post(`/sessions/${id}/abort`, {});
    expect(await abort.json()).toMatchObject({
      aborted: true,
      run: { id: runId, status: 'aborted', pending_action: null },
    });
    expect((await post(`/sessions/${id}/runs/${runId}/resume`, { decisions })).status).toBe(409);
  });
});
