import type { CompletionPayload } from '@cognition/runtime';
import { a2aPushNotification, callbackConfigOf, pushConfig } from './push-notification';

const ended = (status: string, error: CompletionPayload['error'] = null): CompletionPayload => ({
  session_id: 'sess_1',
  message_id: null,
  run_id: 'run_1',
  status,
  output: '',
  token_usage: { input: 0, output: 0 },
  model_used: null,
  completed_at: '2026-01-01T00:00:00.000Z',
  error,
});

describe('A2A push notifications (issue 30)', () => {
  it('sends a failed task over v1.0 as a StreamResponse, its error as status message', () => {
    const config = { a2aVersion: '1.0' as const, token: '', authentication: null };
    const { body, headers } = a2aPushNotification(
      ended('failed', { code: 'UNAVAILABLE', message: 'model down' }),
      config,
    );
    expect(headers).toEqual({ 'content-type': 'application/a2a+json' });
    const sent = JSON.parse(body) as { task: { artifacts?: unknown[] } };
    expect(sent).toMatchObject({
      task: {
        id: 'run_1',
        contextId: 'sess_1',
        status: {
          state: 'TASK_STATE_FAILED',
          message: { parts: [{ text: 'UNAVAILABLE: model down' }] },
        },
      },
    });
    expect(sent.task.artifacts ?? []).toEqual([]);
  });

  it('sends a canceled task over v0.3 as the v0.3 task, with the token and credentials', () => {
    const config = callbackConfigOf(
      { token: 't', authentication: { scheme: 'Basic', credentials: 'dTpw' } },
      '0.3',
    );
    const { body, headers } = a2aPushNotification(ended('aborted'), config);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'X-A2A-Notification-Token': 't',
      authorization: 'Basic dTpw',
    });
    expect(JSON.parse(body)).toMatchObject({
      kind: 'task',
      id: 'run_1',
      contextId: 'sess_1',
      status: { state: 'canceled' },
    });
  });

  it('reads a config back with what was kept, and keeps no authentication without a scheme', () => {
    expect(
      callbackConfigOf({ token: '', authentication: { scheme: '', credentials: 'x' } }, '1.0'),
    ).toEqual({ a2aVersion: '1.0', token: '', authentication: null });
    const run = {
      id: 'run_1',
      callbackUrl: 'https://example.com/hook',
      callbackConfig: { a2aVersion: '1.0' as const, token: 't', authentication: null },
    };
    expect(pushConfig(run as Parameters<typeof pushConfig>[0], '')).toEqual({
      tenant: '',
      id: 'callback',
      taskId: 'run_1',
      url: 'https://example.com/hook',
      token: 't',
      authentication: undefined,
    });
  });
});
