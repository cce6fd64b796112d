import { SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import type { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import type { PushDelivery } from './push-receiver';

/* The A2A specs' helpers around `@a2a-js/sdk`'s client (v1.0 JSON-RPC). */

function keyed(key: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('Authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
}

export function clientFor(url: string, agent: string, key: string): Promise<Client> {
  const fetchImpl = keyed(key);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  // The agent's base URL ends with a slash: its card is relative to it.
  return factory.createFromUrl(`${url}/a2a/${agent}/`);
}

export function message(text: string, extra: { contextId?: string; taskId?: string } = {}) {
  return SendMessageRequest.fromJSON({
    message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
  });
}

export const answerOf = (task: Task) =>
  task.artifacts
    .flatMap((a) => a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')))
    .join('');

export async function drain(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** The task a v1.0 push notification carries (its body is a `StreamResponse`), or null. */
export function pushedTask(delivery: PushDelivery): Task | null {
  const payload = StreamResponse.fromJSON(delivery.body).payload;
  return payload?.$case === 'task' ? payload.value : null;
}
