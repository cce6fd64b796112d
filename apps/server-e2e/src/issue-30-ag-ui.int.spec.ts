import { HttpAgent } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/client';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer, startAgentServer } from './testing/agent-server';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 30: an agent over AG-UI, driven by `@ag-ui/client`'s `HttpAgent` as a CopilotKit-style
 * frontend uses it, on SQLite and PostgreSQL: a run streams AG-UI events (run started, text
 * message start/content/end, run finished) and the next run on the same thread continues the
 * same session; a frontend tool the model calls pauses the run, whose stream ends with the call,
 * and the next input carrying the tool's result resumes it; after a kill -9 of the server,
 * re-posting the same input (same runId) re-attaches to the run, which resumes from its
 * checkpoint, and streams its end.
 */

const KEY = 'agui-key-0123456789';

function reply(request: RecordedRequest) {
  const messages = request.body.messages ?? [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: `The tool said: ${String(last.content)}` };
  const users = messages.filter((m) => m.role === 'user');
  return { text: `Heard ${users.length} message(s), last: ${String(users.at(-1)?.content)}` };
}

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city, looked up by the browser.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

function describeOn(name: string, database: () => Promise<ServerDatabase>): void {
  describe(`AG-UI at /ag-ui/<agent>, ${name}`, () => {
    let fake: FakeOpenAIServer;
    const workspace = tempWorkspace('cognition-agui-');
    let db: ServerDatabase;
    let server: ServerProcess;
    const start = () =>
      startAgentServer(fake, workspace.dir, {
        ...db.env,
        COGNITION_API_KEYS: KEY,
        // The process after a kill -9 takes the run over once the dead one's claim lapses.
        COGNITION_RUN_LEASE_SECONDS: '2',
      });
    const agentAt = (url: string, threadId?: string) =>
      new HttpAgent({
        url: `${url}/ag-ui/default`,
        headers: { Authorization: `Bearer ${KEY}` },
        ...(threadId ? { threadId } : {}),
      });

    beforeAll(async () => {
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

    it('streams a run as AG-UI events and continues the thread', async () => {
      const agent = agentAt(server.url);
      agent.addMessage({ id: 'u1', role: 'user', content: 'hello there' });
      const events: BaseEvent[] = [];
      const first = await agent.runAgent({}, { onEvent: ({ event }) => void events.push(event) });
      const types: string[] = events.map((e) => e.type);
      expect(types[0]).toBe('RUN_STARTED');
      expect(types.at(-1)).toBe('RUN_FINISHED');
      expect(types).toContain('TEXT_MESSAGE_START');
      expect(types.filter((t) => t === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThan(2);
      expect(types).toContain('TEXT_MESSAGE_END');
      expect(first.newMessages).toEqual([
        expect.objectContaining({
          role: 'assistant',
          content: 'Heard 1 message(s), last: hello there',
        }),
      ]);

      agent.addMessage({ id: 'u2', role: 'user', content: 'and again' });
      const second = await agent.runAgent();
      expect(second.newMessages.at(-1)).toMatchObject({
        role: 'assistant',
        content: 'Heard 2 message(s), last: and again',
      });
    });

    it('pauses the run on a frontend tool call and resumes it with the tool result', async () => {
      fake.enqueue({
        toolCalls: [{ id: 'call_weather_1', name: 'get_weather', args: { city: 'Paris' } }],
      });
      const agent = agentAt(server.url);
      agent.addMessage({ id: 'u1', role: 'user', content: 'weather in Paris?' });
      const events: BaseEvent[] = [];
      const first = await agent.runAgent(
        { runId: `tools-run-${name}`, tools: [WEATHER] },
        { onEvent: ({ event }) => void events.push(event) },
      );
      // The model was offered the frontend tool with the client's schema.
      const offered = fake.requests
        .at(-1)
        ?.body.tools?.find((t) => t.function.name === 'get_weather');
      expect(offered?.function.parameters).toEqual(WEATHER.parameters);
      // Our extra events (CUSTOM: usage, status) may come in between.
      const types = events.map((e) => String(e.type)).filter((t) => t !== 'CUSTOM');
      expect(types.slice(-4)).toEqual([
        'TOOL_CALL_START',
        'TOOL_CALL_ARGS',
        'TOOL_CALL_END',
        'RUN_FINISHED',
      ]);
      expect(types).not.toContain('TOOL_CALL_RESULT');
      const call = first.newMessages.flatMap((m) =>
        m.role === 'assistant' ? (m.toolCalls ?? []) : [],
      )[0];
      expect(call).toMatchObject({ id: 'call_weather_1', function: { name: 'get_weather' } });
      expect(JSON.parse(call?.function.arguments ?? '')).toEqual({ city: 'Paris' });

      // The frontend runs the tool and posts its result, as CopilotKit does: a tool message.
      agent.addMessage({
        id: 't1',
        role: 'tool',
        toolCallId: 'call_weather_1',
        content: 'sunny, 21 C',
      });
      const resumedEvents: BaseEvent[] = [];
      const second = await agent.runAgent(
        { tools: [WEATHER] },
        { onEvent: ({ event }) => void resumedEvents.push(event) },
      );
      expect(resumedEvents.map((e) => e.type)).not.toContain('TOOL_CALL_RESULT');
      expect(resumedEvents.at(-1)?.type).toBe('RUN_FINISHED');
      expect(second.newMessages.at(-1)).toMatchObject({
        role: 'assistant',
        content: 'The tool said: sunny, 21 C',
      });
      const toolMessage = fake.requests.at(-1)?.body.messages?.find((m) => m.role === 'tool');
      expect(toolMessage).toMatchObject({ tool_call_id: 'call_weather_1', content: 'sunny, 21 C' });

      // Re-attaching to the first input replays the run, its pause included, as one AG-UI run.
      const replay = agentAt(server.url, agent.threadId);
      replay.addMessage({ id: 'u1', role: 'user', content: 'weather in Paris?' });
      const replayed: string[] = [];
      const again = await replay.runAgent(
        { runId: `tools-run-${name}`, tools: [WEATHER] },
        { onEvent: ({ event }) => void replayed.push(String(event.type)) },
      );
      expect(replayed.filter((t) => t === 'RUN_FINISHED')).toHaveLength(1);
      expect(replayed.at(-1)).toBe('RUN_FINISHED');
      expect(again.newMessages.at(-1)).toMatchObject({ content: 'The tool said: sunny, 21 C' });

      // A thread whose run waits on a frontend tool takes no new message without the result.
      fake.enqueue({
        toolCalls: [{ id: 'call_weather_2', name: 'get_weather', args: { city: 'Oslo' } }],
      });
      agent.addMessage({ id: 'u2', role: 'user', content: 'and in Oslo?' });
      await agent.runAgent({ tools: [WEATHER] });
      agent.addMessage({ id: 'u3', role: 'user', content: 'never mind' });
      await expect(agent.runAgent({ tools: [WEATHER] })).rejects.toThrow(/409/);
      agent.addMessage({ id: 't2', role: 'tool', toolCallId: 'call_weather_2', content: 'snow' });
      const third = await agent.runAgent({ tools: [WEATHER] });
      expect(third.newMessages.at(-1)).toMatchObject({ content: 'The tool said: snow' });
      // The same results again (a retried post): nothing waits for them, nothing is re-sent.
      const requests = fake.requests.length;
      agent.setMessages(agent.messages.filter((m) => m.role !== 'assistant' || m.toolCalls));
      await expect(agent.runAgent({ tools: [WEATHER] })).rejects.toThrow(/409/);
      expect(fake.requests.length).toBe(requests);
    });

    it('re-attaches to a run by re-posting its input after kill -9 of the server', async () => {
      // The first model call stalls mid-answer; the resumed run gets the fallback's answer.
      fake.enqueue({ text: 'partial words that never end', hangAfterChunks: 2 });
      const threadId = `thread-crash-${name}`;
      const input = {
        threadId,
        runId: 'agui-run-crash',
        messages: [{ id: 'u1', role: 'user', content: 'survive' }],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
      };
      // The first post, read as raw SSE until text arrived (the model hangs after two chunks,
      // which the stream may deliver as one); then the server dies mid-answer.
      const res = await fetch(`${server.url}/ag-ui/default`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${KEY}`,
          'Content-Type': 'application/json',
          Accept: 'text/event-stream',
        },
        body: JSON.stringify(input),
      });
      expect(res.status).toBe(200);
      if (!res.body) throw new Error('no stream');
      const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
      let text = '';
      while (!text.includes('TEXT_MESSAGE_CONTENT')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended early: ${text}`);
        text += new TextDecoder().decode(value);
      }
      await server.stop('SIGKILL');
      await reader.cancel().catch(() => undefined);
      server = await start();
      // The same input again (same threadId and runId), to the restarted server.
      const again = agentAt(server.url, threadId);
      again.addMessage({ id: 'u1', role: 'user', content: 'survive' });
      const events: BaseEvent[] = [];
      const result = await again.runAgent(
        { runId: 'agui-run-crash' },
        { onEvent: ({ event }) => void events.push(event) },
      );
      expect(events.at(-1)?.type).toBe('RUN_FINISHED');
      expect(events).toContainEqual(
        expect.objectContaining({ type: 'CUSTOM', name: 'cognition.resumed' }),
      );
      expect(result.newMessages.at(-1)).toMatchObject({
        role: 'assistant',
        content: 'Heard 1 message(s), last: survive',
      });
      // The replay held the cut-off text; the client keeps the answer once, and no copy of it.
      expect(again.messages).toEqual([
        { id: 'u1', role: 'user', content: 'survive' },
        expect.objectContaining({
          role: 'assistant',
          content: 'Heard 1 message(s), last: survive',
        }),
      ]);
      expect(events.map((e) => e.type)).toContain('MESSAGES_SNAPSHOT');
    });

    it('refuses bad input, unknown agents and missing keys before streaming', async () => {
      const post = (path: string, body: unknown, key: string | null = KEY) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            ...(key ? { Authorization: `Bearer ${key}` } : {}),
          },
          body: JSON.stringify(body),
        });
      const input = {
        threadId: 't',
        runId: 'r',
        messages: [{ id: 'm', role: 'user', content: 'hi' }],
        tools: [],
      };
      const bad = await post('/ag-ui/default', { ...input, threadId: 7 });
      expect(bad.status).toBe(422);
      expect(await bad.json()).toMatchObject({ errors: [{ path: 'body.threadId' }] });
      expect((await post('/ag-ui/nobody', input)).status).toBe(404);
      expect((await post('/ag-ui/default', input, null)).status).toBe(401);
      const clash = await post('/ag-ui/default', {
        ...input,
        tools: [{ name: 'read_file', description: 'mine', parameters: {} }],
      });
      expect(clash.status).toBe(422);
      expect(await clash.json()).toMatchObject({ errors: [{ path: 'body.tools.0.name' }] });
    });
  });
}

describeOn('SQLite', () => sqliteServerDatabase('cognition-agui-sqlite-'));

describeOn('PostgreSQL', postgresServerDatabase);
