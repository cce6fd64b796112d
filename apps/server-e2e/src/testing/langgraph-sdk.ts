import { FakeOpenAIServer } from '@cognition/runtime/testing';

/*
 * What the specs that drive the LangGraph API with the official SDK share.
 */

/** The SDK's HTTPError of a call expected to fail: the status and the raw body. */
export async function sdkFailure(
  promise: Promise<unknown>,
): Promise<{ status: number; body: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { status?: number; text?: string };
    return { status: e.status ?? -1, body: e.text ? (JSON.parse(e.text) as unknown) : null };
  }
  throw new Error('expected the request to fail');
}

/** The model of our agents in these specs: answers "You said: <the last user message>", word by word. */
export function startEchoModel(): Promise<FakeOpenAIServer> {
  return FakeOpenAIServer.start({
    fallback: (request) => {
      const last = request.body.messages?.filter((m) => m.role === 'user').at(-1);
      return { text: `You said: ${String(last?.content)}` };
    },
  });
}
