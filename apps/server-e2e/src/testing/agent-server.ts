import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { http } from './http';
import type { HttpResponse } from './http';
import type { ServerProcess } from './server-process';
import { startServerProcess } from './server-process';

/** The model name the fake provider serves. */
export const FAKE_MODEL = 'fake-model';

/**
 * The settings that make the built server talk to `fake` as its `openai_compatible` provider
 * over loopback (no retries, so a scripted error reaches the run at once).
 */
export function fakeProviderEnv(fake: FakeOpenAIServer): Record<string, string> {
  return {
    COGNITION_LLM_PROVIDER: 'openai_compatible',
    COGNITION_LLM_MODEL: FAKE_MODEL,
    COGNITION_OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
  };
}

/** Spawns the built server (SQLite in `workspace`) wired to the fake provider. */
export function startAgentServer(
  fake: FakeOpenAIServer,
  workspace: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  return startServerProcess({
    COGNITION_WORKSPACE_ROOT: workspace,
    ...fakeProviderEnv(fake),
    ...env,
  });
}

/** Creates a session over REST and returns its id. */
export async function createSession(url: string, body: Record<string, unknown> = {}) {
  const res: HttpResponse = await http(url, 'POST', '/sessions', { body });
  if (res.status !== 201) throw new Error(`session create failed: ${res.status} ${res.text}`);
  return String(res.json?.['id']);
}

/** POST /sessions/{id}/messages as curl sends it; the body is left unread (an SSE stream). */
export function postMessage(
  url: string,
  sessionId: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Polls until `check` passes (or fails after `ms`). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  ms = 10_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export { FakeOpenAIServer };
