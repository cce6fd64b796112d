import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer, startAgentServer } from './testing/agent-server';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 30: our agents over MCP. The official SDK's `Client` over Streamable HTTP against the
 * built server: the agents are tools `ask_<agent>` (an agent with `expose: {mcp: false}` and
 * subagents are not), a call streams progress and answers, a second call with the returned
 * session id continues the conversation, sessions are resources, and another tenant's key sees
 * none of it.
 */

const ALICE = 'alice-key-0123456789';
const BOB = 'bob-key-0123456789ab';

const AGENTS: Record<string, string> = {
  'hidden.md': '---\ndescription: Not offered over MCP.\nexpose: { mcp: false }\n---\n\nHidden.\n',
  'helper.md': '---\ndescription: A subagent.\nmode: subagent\n---\n\nHelps.\n',
};

/** Answers with how many user messages the thread holds and the last one (several chunks). */
function reply(request: RecordedRequest) {
  const users = (request.body.messages ?? []).filter((m) => m.role === 'user');
  return { text: `Heard ${users.length} message(s), last: ${String(users.at(-1)?.content)}` };
}

async function connect(url: string, key?: string): Promise<Client> {
  const client = new Client({ name: 'issue-30-spec', version: '1.0.0' });
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

interface AskResult {
  content: { type: string; text?: string; uri?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function describeOn(name: string, database: () => Promise<ServerDatabase>): void {
  describe(`MCP server at /mcp, ${name}`, () => {
    let fake: FakeOpenAIServer;
    const workspace = tempWorkspace('cognition-mcp-');
    let db: ServerDatabase;
    let server: ServerProcess;
    const clients: Client[] = [];
    const open = async (key?: string) => {
      const client = await connect(server.url, key);
      clients.push(client);
      return client;
    };

    beforeAll(async () => {
      const agents = path.join(workspace.dir, '.cognition', 'agents');
      mkdirSync(agents, { recursive: true });
      for (const [file, text] of Object.entries(AGENTS))
        writeFileSync(path.join(agents, file), text);
      fake = await FakeOpenAIServer.start({ fallback: reply });
      db = await database();
      server = await startAgentServer(fake, workspace.dir, {
        ...db.env,
        COGNITION_SCOPING_ENABLED: 'true',
        COGNITION_SCOPE_KEYS: 'user',
        COGNITION_API_KEYS: `${ALICE}:user=alice,${BOB}:user=bob`,
      });
    }, 60_000);
    afterAll(async () => {
      await Promise.all(clients.map((client) => client.close()));
      await server?.stop('SIGKILL');
      await fake?.close();
      await db?.drop();
      workspace.remove();
    });

    it('lists the agents as tools, streams progress, answers, and continues the session', async () => {
      const alice = await open(ALICE);
      const { tools } = await alice.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['ask_default', 'ask_readonly']);
      const ask = tools.find((tool) => tool.name === 'ask_default');
      expect(ask?.inputSchema).toMatchObject({
        properties: { message: { type: 'string' }, session_id: { type: 'string' } },
        required: ['message'],
      });

      const progress: { progress: number; message?: string }[] = [];
      const first = (await alice.callTool(
        { name: 'ask_default', arguments: { message: 'first question' } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      )) as AskResult;
      expect(first.isError).toBeFalsy();
      expect(first.content[0]).toEqual({
        type: 'text',
        text: 'Heard 1 message(s), last: first question',
      });
      const sessionId = String(first.structuredContent?.['session_id']);
      expect(first.structuredContent).toMatchObject({
        status: 'completed',
        answer: first.content[0]?.text,
      });
      expect(first.content[1]).toMatchObject({
        type: 'resource_link',
        uri: `cognition://sessions/${sessionId}/messages`,
      });
      // One notification per event, increasing; the tokens' text among them.
      expect(progress.length).toBeGreaterThan(3);
      expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
      expect(progress.map((p) => p.message ?? '').join('')).toContain('Heard 1 message(s)');

      const second = (await alice.callTool({
        name: 'ask_default',
        arguments: { message: 'second one', session_id: sessionId },
      })) as AskResult;
      expect(second.content[0]?.text).toBe('Heard 2 message(s), last: second one');
      expect(second.structuredContent?.['session_id']).toBe(sessionId);

      const { resources } = await alice.listResources();
      expect(resources.map((r) => r.uri)).toContain(`cognition://sessions/${sessionId}/messages`);
      const read = await alice.readResource({ uri: `cognition://sessions/${sessionId}/messages` });
      const content = read.contents[0];
      expect(content?.mimeType).toBe('application/json');
      const body = JSON.parse(content && 'text' in content ? content.text : '') as {
        session: { agent: string };
        messages: { role: string; content: string }[];
      };
      expect(body.session.agent).toBe('default');
      expect(body.messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'first question'],
        ['assistant', 'Heard 1 message(s), last: first question'],
        ['user', 'second one'],
        ['assistant', 'Heard 2 message(s), last: second one'],
      ]);

      // Another tenant's key: the session is not listed, not readable, not continued.
      const bob = await open(BOB);
      expect((await bob.listResources()).resources).toEqual([]);
      await expect(
        bob.readResource({ uri: `cognition://sessions/${sessionId}/messages` }),
      ).rejects.toMatchObject({ code: -32002 });
      const stolen = (await bob.callTool({
        name: 'ask_default',
        arguments: { message: 'let me in', session_id: sessionId },
      })) as AskResult;
      expect(stolen.isError).toBe(true);
      expect(stolen.content[0]?.text).toContain(`Session not found: ${sessionId}`);

      // A new session is titled after the message: cut by code point, never through an emoji.
      const emoji = (await alice.callTool({
        name: 'ask_readonly',
        arguments: { message: `${'a'.repeat(79)}\u{1F600} and more` },
      })) as AskResult;
      expect(emoji.isError).toBeFalsy();

      // A session of another agent is refused, naming the field.
      const wrongAgent = (await alice.callTool({
        name: 'ask_readonly',
        arguments: { message: 'hi', session_id: sessionId },
      })) as AskResult;
      expect(wrongAgent.isError).toBe(true);
      expect(wrongAgent.content[0]?.text).toContain('belongs to agent "default"');
    });

    it('refuses a missing or wrong key, bad arguments and unknown tools', async () => {
      await expect(connect(server.url)).rejects.toThrow(/401|Unauthorized/i);
      await expect(connect(server.url, 'not-a-key')).rejects.toThrow(/401|Unauthorized/i);
      const alice = await open(ALICE);
      const empty = (await alice.callTool({
        name: 'ask_default',
        arguments: { message: '' },
      })) as AskResult;
      expect(empty.isError).toBe(true);
      expect(empty.content[0]?.text).toContain('message');
      await expect(
        alice.callTool({ name: 'ask_hidden', arguments: { message: 'hi' } }),
      ).resolves.toMatchObject({ isError: true });
      const get = await fetch(`${server.url}/mcp`, {
        headers: { Authorization: `Bearer ${ALICE}` },
      });
      expect(get.status).toBe(405);
      const garbage = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${ALICE}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: '{"jsonrpc": "2.0", ',
      });
      expect(garbage.status).toBe(400);
      expect(await garbage.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700 },
      });
    });
  });
}

describeOn('SQLite', () => sqliteServerDatabase('cognition-mcp-sqlite-'));

describeOn('PostgreSQL', postgresServerDatabase);
