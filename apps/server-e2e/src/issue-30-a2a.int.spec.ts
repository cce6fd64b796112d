import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SendMessageRequest, TaskState } from '@a2a-js/sdk';
import type { Task } from '@a2a-js/sdk';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer, eventually, startAgentServer } from './testing/agent-server';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import { startPushReceiver } from './testing/push-receiver';
import { answerOf, clientFor, drain, message, pushedTask } from './testing/a2a-client';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 30: our agents over A2A, driven by the official `@a2a-js/sdk` client (v1.0 JSON-RPC):
 * per-agent card discovery, a blocking and a streamed message, contextId continuing the
 * session, tasks read and refused across tenants, an interrupt as input-required answered
 * over A2A, push notifications (given at send, or set, read, listed and deleted on a task, with
 * their token and authentication) delivered as the A2A task — a v1.0 `StreamResponse`, or the
 * v0.3 task for a config set over v0.3 — with the token and credentials in their headers, and
 * signed for a receiver that checks the signature, a
 * resubscribe after kill -9 of the server that gets the end of the task, and malformed
 * JSON-RPC answered with the spec's error objects.
 */

const ALICE = 'alice-key-0123456789';
const CALLBACK_SECRET = 'push-secret-0123456789';

const BOB = 'bob-key-0123456789ab';

const CAREFUL = `---
description: Runs commands once approved.
tools: [execute]
interrupt_on:
  execute: { allowed: [approve, reject] }
---

You run commands.
`;

/** "run it" asks for a command; a tool result is quoted back; else how many questions it saw. */
function reply(request: RecordedRequest) {
  const messages = request.body.messages ?? [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: `Tool said ${String(last.content).trim()}` };
  const users = messages.filter((m) => m.role === 'user');
  if (String(users.at(-1)?.content) === 'run it') {
    return { toolCalls: [{ name: 'execute', args: { command: 'echo a2a-approved' } }] };
  }
  return { text: `Heard ${users.length} message(s), last: ${String(users.at(-1)?.content)}` };
}

function rpc(url: string, body: string, key = ALICE, version = '1.0') {
  return fetch(`${url}/a2a/default`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      'A2A-Version': version,
    },
    body,
  });
}

function describeOn(name: string, database: () => Promise<ServerDatabase>): void {
  describe(`A2A at /a2a/<agent>, ${name}`, () => {
    let fake: FakeOpenAIServer;
    const workspace = tempWorkspace('cognition-a2a-');
    let db: ServerDatabase;
    let server: ServerProcess;
    const start = () =>
      startAgentServer(fake, workspace.dir, {
        ...db.env,
        COGNITION_SCOPING_ENABLED: 'true',
        COGNITION_SCOPE_KEYS: 'user',
        COGNITION_API_KEYS: `${ALICE}:user=alice,${BOB}:user=bob`,
        // The process after a kill -9 takes the run over once the dead one's claim lapses.
        COGNITION_RUN_LEASE_SECONDS: '2',
        // Push notifications: signed, and to the test's receiver on loopback.
        COGNITION_CALLBACK_SECRET: CALLBACK_SECRET,
        COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK: 'true',
      });

    beforeAll(async () => {
      const agents = path.join(workspace.dir, '.cognition', 'agents');
      mkdirSync(agents, { recursive: true });
      writeFileSync(path.join(agents, 'careful.md'), CAREFUL);
      writeFileSync(
        path.join(agents, 'hidden.md'),
        '---\ndescription: Not over A2A.\nexpose: { a2a: false }\n---\n\nHidden.\n',
      );
      fake = await FakeOpenAIServer.start({ fallback: reply });
      db = await database();
      server = await start();
    }, 60_000);
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await fake?.close();
      await db?.drop();
      workspace.remove();
    });

    it('discovers the card, sends, streams, continues the context, and keeps tenants apart', async () => {
      const alice = await clientFor(server.url, 'default', ALICE);
      const card = await alice.getAgentCard();
      expect(card.name).toBe('default');
      expect(card.supportedInterfaces[0]).toMatchObject({
        url: `${server.url}/a2a/default`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      });
      await expect(clientFor(server.url, 'hidden', ALICE)).rejects.toThrow();

      const first = (await alice.sendMessage(message('first'))) as Task;
      expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerOf(first)).toBe('Heard 1 message(s), last: first');

      const streamed = await drain(
        alice.sendMessageStream(message('second', { contextId: first.contextId })),
      );
      expect(streamed[0]?.payload?.$case).toBe('task');
      const chunks = streamed.filter((s) => s.payload?.$case === 'artifactUpdate');
      expect(chunks.length).toBeGreaterThan(2);
      const end = streamed.at(-1)?.payload;
      expect(end?.$case === 'statusUpdate' && end.value.status?.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      const taskId = streamed[0]?.payload?.$case === 'task' ? streamed[0].payload.value.id : '';
      const task = await alice.getTask({ id: taskId, tenant: '' });
      expect(task.contextId).toBe(first.contextId);
      expect(answerOf(task)).toBe('Heard 2 message(s), last: second');
      await expect(
        alice.cancelTask({ id: taskId, tenant: '', metadata: undefined }),
      ).rejects.toThrow(/already|cancel/i);

      const bob = await clientFor(server.url, 'default', BOB);
      await expect(bob.getTask({ id: taskId, tenant: '' })).rejects.toThrow(/not found/i);
      await expect(bob.sendMessage(message('in?', { contextId: first.contextId }))).rejects.toThrow(
        /not found/i,
      );
    });

    it('shows an interrupt as input-required and takes the decision over A2A', async () => {
      const client = await clientFor(server.url, 'careful', ALICE);
      const paused = (await client.sendMessage(message('run it'))) as Task;
      expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const question = paused.status?.message?.parts[0]?.content;
      expect(question?.$case === 'text' && question.value).toContain('echo a2a-approved');
      const done = (await client.sendMessage(
        message('approve', { taskId: paused.id, contextId: paused.contextId }),
      )) as Task;
      expect(done.id).toBe(paused.id);
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerOf(done)).toBe('Tool said a2a-approved');
    });

    it('delivers push notifications as A2A tasks with their token and authentication', async () => {
      const receiver = await startPushReceiver(CALLBACK_SECRET);
      const taskNotified = (id: string) =>
        eventually(() =>
          Promise.resolve(receiver.deliveries.find((d) => pushedTask(d)?.id === id)),
        );
      try {
        const plain = await clientFor(server.url, 'default', ALICE);
        expect((await plain.getAgentCard()).capabilities?.pushNotifications).toBe(true);
        // A config given with the message.
        const sent = (await plain.sendMessage(
          SendMessageRequest.fromJSON({
            message: { messageId: 'push-1', role: 'ROLE_USER', parts: [{ text: 'notify me' }] },
            configuration: {
              taskPushNotificationConfig: {
                url: `${receiver.url}/at-send`,
                token: 'token-at-send',
                authentication: { scheme: 'Bearer', credentials: 'receiver-secret-1' },
              },
            },
          }),
        )) as Task;
        const first = await taskNotified(sent.id);
        expect(first).toMatchObject({
          path: '/at-send',
          signed: true,
          headers: {
            'content-type': 'application/a2a+json',
            'x-a2a-notification-token': 'token-at-send',
            authorization: 'Bearer receiver-secret-1',
          },
        });
        const firstTask = pushedTask(first) as Task;
        expect(firstTask).toMatchObject({ id: sent.id, contextId: sent.contextId });
        expect(firstTask.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(answerOf(firstTask)).toBe('Heard 1 message(s), last: notify me');

        // Set, read, list and delete on a task that waits for input, then set again.
        const careful = await clientFor(server.url, 'careful', ALICE);
        const paused = (await careful.sendMessage(message('run it'))) as Task;
        expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
        const config = (url: string, token = '') => ({
          tenant: '',
          id: '',
          taskId: paused.id,
          url,
          token,
          authentication: { scheme: 'Bearer', credentials: `for-${token}` },
        });
        const set = await careful.createTaskPushNotificationConfig(
          config(`${receiver.url}/first`, 'token-first'),
        );
        const kept = {
          taskId: paused.id,
          url: `${receiver.url}/first`,
          token: 'token-first',
          authentication: { scheme: 'Bearer', credentials: 'for-token-first' },
        };
        expect(set).toMatchObject(kept);
        expect(
          await careful.getTaskPushNotificationConfig({
            tenant: '',
            taskId: paused.id,
            id: set.id,
          }),
        ).toMatchObject(kept);
        const ref = { tenant: '', taskId: paused.id, pageSize: 10, pageToken: '' };
        expect((await careful.listTaskPushNotificationConfig(ref)).configs).toEqual([
          expect.objectContaining(kept),
        ]);
        await careful.deleteTaskPushNotificationConfig({
          tenant: '',
          taskId: paused.id,
          id: set.id,
        });
        expect((await careful.listTaskPushNotificationConfig(ref)).configs).toHaveLength(0);
        await careful.createTaskPushNotificationConfig(
          config(`${receiver.url}/final`, 'token-final'),
        );
        const bob = await clientFor(server.url, 'careful', BOB);
        await expect(
          bob.createTaskPushNotificationConfig(config(`${receiver.url}/bob`)),
        ).rejects.toThrow(/not found/i);

        await careful.sendMessage(
          message('approve', { taskId: paused.id, contextId: paused.contextId }),
        );
        const last = await taskNotified(paused.id);
        expect(last).toMatchObject({
          path: '/final',
          signed: true,
          headers: {
            'x-a2a-notification-token': 'token-final',
            authorization: 'Bearer for-token-final',
          },
        });
        const lastTask = pushedTask(last) as Task;
        expect(lastTask).toMatchObject({ id: paused.id, contextId: paused.contextId });
        expect(lastTask.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(answerOf(lastTask)).toBe('Tool said a2a-approved');
        expect(receiver.deliveries.map((d) => d.path)).toEqual(['/at-send', '/final']);
        // An ended task takes no config.
        await expect(
          careful.createTaskPushNotificationConfig(config(`${receiver.url}/late`)),
        ).rejects.toThrow(/ended/);

        // A config given over v0.3 gets the v0.3 task, its token and credentials.
        const legacy = await rpc(
          server.url,
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'message/send',
            params: {
              message: {
                kind: 'message',
                messageId: 'push-v03',
                role: 'user',
                parts: [{ kind: 'text', text: 'old client' }],
              },
              configuration: {
                pushNotificationConfig: {
                  url: `${receiver.url}/v03`,
                  token: 'token-v03',
                  authentication: { schemes: ['Bearer'], credentials: 'receiver-secret-3' },
                },
              },
            },
          }),
          ALICE,
          '0.3',
        );
        const { result } = (await legacy.json()) as { result: { id: string; contextId: string } };
        const old = await eventually(() =>
          Promise.resolve(receiver.deliveries.find((d) => d.path === '/v03')),
        );
        expect(old).toMatchObject({
          signed: true,
          headers: {
            'content-type': 'application/json',
            'x-a2a-notification-token': 'token-v03',
            authorization: 'Bearer receiver-secret-3',
          },
          body: {
            kind: 'task',
            id: result.id,
            contextId: result.contextId,
            status: { state: 'completed' },
            artifacts: [
              { parts: [{ kind: 'text', text: 'Heard 1 message(s), last: old client' }] },
            ],
          },
        });
      } finally {
        await receiver.close();
      }
    });

    it('resubscribes after kill -9 of the server and gets the end of the task', async () => {
      // The first model call stalls mid-answer; the resumed run gets the fallback's answer.
      fake.enqueue({ text: 'partial words that never end', hangAfterChunks: 2 });
      const client = await clientFor(server.url, 'default', ALICE);
      const stream = client.sendMessageStream(message('survive'));
      let taskId = '';
      let chunks = 0;
      for await (const item of stream) {
        if (item.payload?.$case === 'task') taskId = item.payload.value.id;
        if (item.payload?.$case === 'artifactUpdate') chunks += 1;
        if (chunks === 2) break;
      }
      await server.stop('SIGKILL');
      server = await start();
      const after = await clientFor(server.url, 'default', ALICE);
      const rest = await drain(after.resubscribeTask({ id: taskId, tenant: '' }));
      expect(rest[0]?.payload?.$case).toBe('task');
      // The stream ends with the task completed: its last status update (or, had the resumed
      // run already finished, the snapshot it starts with).
      const end = rest.at(-1)?.payload;
      const endState =
        end?.$case === 'task' || end?.$case === 'statusUpdate' ? end.value.status?.state : null;
      expect(endState).toBe(TaskState.TASK_STATE_COMPLETED);
      const task = await after.getTask({ id: taskId, tenant: '' });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerOf(task)).toBe('Heard 1 message(s), last: survive');
    });

    it('answers malformed JSON-RPC with the spec error objects (never a 500), and v0.3 clients', async () => {
      const cases: [string, number][] = [
        ['{"jsonrpc": "2.0", ', -32700],
        ['{"jsonrpc": "1.0", "id": 1, "method": "SendMessage"}', -32600],
        ['{"jsonrpc": "2.0", "id": 2, "method": "NoSuchMethod", "params": {}}', -32601],
        [
          '{"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {"messageId": "x", "role": "ROLE_USER", "parts": []}}}',
          -32602,
        ],
        ['{"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": "run_nope"}}', -32001],
      ];
      for (const [body, code] of cases) {
        const res = await rpc(server.url, body);
        expect(res.status).toBeLessThan(500);
        const answer = (await res.json()) as { error?: { code: number; message: string } };
        expect({ body, code: answer.error?.code }).toEqual({ body, code });
      }
      const invalid = await rpc(
        server.url,
        '{"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {"messageId": "x", "role": "ROLE_USER", "parts": []}}}',
      );
      expect(((await invalid.json()) as { error: { message: string } }).error.message).toContain(
        'message.parts',
      );
      const unknown = await fetch(`${server.url}/a2a/nobody`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json' },
        body: '{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}',
      });
      expect(unknown.status).toBe(404);
      // A v0.3 client (no A2A-Version header): the same agent under v0.3's method names.
      const legacy = (method: string, params: object) =>
        fetch(`${server.url}/a2a/default`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
        }).then((res) => res.json() as Promise<{ result?: Record<string, unknown> }>);
      const sent = await legacy('message/send', {
        message: {
          kind: 'message',
          messageId: 'm9',
          role: 'user',
          parts: [{ kind: 'text', text: 'legacy' }],
        },
      });
      expect(sent.result).toMatchObject({
        kind: 'task',
        status: { state: 'completed' },
        artifacts: [{ parts: [{ kind: 'text', text: 'Heard 1 message(s), last: legacy' }] }],
      });
      const got = await legacy('tasks/get', { id: sent.result?.['id'] });
      expect(got.result).toMatchObject({ id: sent.result?.['id'], status: { state: 'completed' } });
      const noKey = await fetch(`${server.url}/a2a/default/.well-known/agent-card.json`);
      expect(noKey.status).toBe(401);
    });
  });
}

describeOn('SQLite', () => sqliteServerDatabase('cognition-a2a-sqlite-'));

describeOn('PostgreSQL', postgresServerDatabase);
