import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import {
  FakeOpenAIServer,
  createSession,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 31: stdio MCP servers with the Docker sandbox. The BUILT server runs with
 * `COGNITION_SANDBOX_BACKEND=docker`; an agent names a stdio MCP server written in plain `sh`
 * (the sandbox image is busybox: no node, no python), which must run inside the session's
 * hardened container — non-root, read-only root filesystem, the workspace at /workspace — and
 * answer the model's tool call over the `docker exec`'s attached stdin and stdout.
 */

/** A minimal MCP stdio server: one JSON-RPC message per line; notifications are ignored. */
const SH_MCP_SERVER = String.raw`while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  method=$(printf '%s' "$line" | sed -n 's/.*"method":"\([^"]*\)".*/\1/p')
  [ -z "$id" ] && continue
  case "$method" in
    initialize)
      v=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"sh-mcp","version":"1.0.0"}}}\n' "$id" "$v";;
    tools/list)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"whereami","description":"Where this server runs","inputSchema":{"type":"object","properties":{}}}]}}\n' "$id";;
    tools/call)
      if touch /probe 2>/dev/null; then root=writable; else root=read-only; fi
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"uid=%s root=%s pwd=%s"}]}}\n' "$id" "$(id -u)" "$root" "$PWD";;
    *)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no method %s"}}\n' "$id" "$method";;
  esac
done
`;

let fake: FakeOpenAIServer;
let server: ServerProcess | undefined;
const workspace = tempWorkspace('cognition-e2e-mcp-docker-');
const sessions: string[] = [];

beforeAll(async () => {
  const agents = path.join(workspace.dir, '.cognition/agents');
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    path.join(agents, 'shnotes.yaml'),
    [
      'description: Uses a stdio MCP server inside its container',
      'system_prompt: You look around.',
      'tools: [read_file]',
      'mcp_servers:',
      // The image holds no server of ours: the script goes inline (YAML reads the JSON list).
      `  - {name: sh, command: sh, args: ${JSON.stringify(['-c', SH_MCP_SERVER])}}`,
    ].join('\n'),
  );
  fake = await FakeOpenAIServer.start();
  server = await startAgentServer(fake, workspace.dir, { COGNITION_SANDBOX_BACKEND: 'docker' });
});

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  await fake.close();
  // The sessions' containers (labelled per session) go with the test.
  for (const id of sessions) {
    const ids = execFileSync('docker', ['ps', '-aq', '--filter', `label=cognition.session=${id}`])
      .toString()
      .split('\n')
      .filter(Boolean);
    if (ids.length > 0) execFileSync('docker', ['rm', '-f', ...ids]);
  }
  workspace.remove();
});

it('runs the stdio MCP server inside the session container and answers the tool call', async () => {
  if (!server) throw new Error('the server did not start');
  const sessionId = await createSession(server.url, { agent_name: 'shnotes' });
  sessions.push(sessionId);
  fake.enqueue(
    { toolCalls: [{ id: 'm1', name: 'mcp__sh__whereami', args: {} }] },
    { text: 'found it' },
  );
  const events = eventsOf(
    (await readSse(await postMessage(server.url, sessionId, { content: 'where are you' }))).frames,
  );
  expect(events.at(-1)?.event).toBe('done');
  const result = events.find(
    (e) => e.event === 'tool_result' && e.data['tool_call_id'] === 'm1',
  )?.data;
  expect(result).toMatchObject({ exit_code: 0 });
  expect(String(result?.['output'])).toMatch(/^uid=[1-9]\d* root=read-only pwd=\/workspace$/);
});
