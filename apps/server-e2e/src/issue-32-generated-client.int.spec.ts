import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ExecResult } from './testing/exec';
import { attempt } from './testing/exec';
import { FakeOpenAIServer, startAgentServer } from './testing/agent-server';
import { http } from './testing/http';
import { REPO_ROOT } from './testing/paths';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 32: the OpenAPI document is enough to generate a working client. `openapi-typescript`
 * generates types from the BUILT server's `/openapi.json` into a temporary folder; `tsc` compiles
 * them with a small consumer that uses `openapi-fetch` to create a session and send a message,
 * and reads the SSE answer with a parser typed by the generated `AgentEvent` (narrowing on
 * `event` gives each frame's `data` its own type). The compiled consumer then runs a whole
 * streamed turn (a tool call, then an answer) against the server and its scripted model. A
 * consumer that misreads an event's data must not compile.
 */

const TSC = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
const OPENAPI_TS = path.join(REPO_ROOT, 'node_modules/openapi-typescript/bin/cli.js');

/** The consumer: generated types + openapi-fetch + a typed SSE parser. */
const CONSUMER = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type AgentEvent = components['schemas']['AgentEvent'];
type EventName = AgentEvent['event'];

/** Every event name of the document, checked both ways by the compiler. */
const EVENT_NAMES: { [K in EventName]: true } = {
  queued: true, status: true, token: true, tool_call: true, tool_result: true, planning: true,
  step_complete: true, delegation: true, artifact: true, usage: true, compaction: true,
  error: true, done: true, reconnected: true, resumed: true, interrupt: true, graph: true,
};

function isEventName(name: string): name is EventName {
  return Object.prototype.hasOwnProperty.call(EVENT_NAMES, name);
}

/** Frames of a text/event-stream body: id/event/data lines up to a blank line. */
async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<AgentEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end = buffered.indexOf('\\n\\n');
    while (end !== -1) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf('\\n\\n');
      let id = '';
      let event = '';
      const data: string[] = [];
      for (const line of block.split('\\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const text = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') id = text;
        else if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
      }
      if (!isEventName(event)) continue;
      yield { id, event, data: JSON.parse(data.join('\\n')) } as AgentEvent;
    }
  }
}

async function main(baseUrl: string): Promise<void> {
  const api = createClient<paths>({ baseUrl });
  const created = await api.POST('/sessions', { body: { title: 'generated client' } });
  if (!created.data) throw new Error('session create failed: ' + JSON.stringify(created.error));
  const sessionId: string = created.data.id;

  const sent = await api.POST('/sessions/{id}/messages', {
    params: { path: { id: sessionId } },
    body: { content: 'Write A1 to a.txt' },
    parseAs: 'stream',
  });
  const body = sent.response.body;
  if (sent.response.status !== 200 || !body) throw new Error('send failed: ' + sent.response.status);

  const events: string[] = [];
  const toolCalls: string[] = [];
  const exitCodes: number[] = [];
  let text = '';
  let lastId = '';
  let answer: string | null = null;
  let cost: number | null | undefined;
  for await (const frame of readEvents(body)) {
    events.push(frame.event);
    lastId = frame.id;
    switch (frame.event) {
      case 'token':
        text += frame.data.content;
        break;
      case 'tool_call':
        toolCalls.push(frame.data.name + ' ' + JSON.stringify(frame.data.args));
        break;
      case 'tool_result':
        exitCodes.push(frame.data.exit_code);
        break;
      case 'usage':
        cost = frame.data.estimated_cost;
        break;
      case 'done':
        answer = frame.data.assistant_data ? frame.data.assistant_data.content : null;
        break;
      case 'error':
        throw new Error(frame.data.code + ': ' + frame.data.message);
      default:
        break;
    }
  }
  const runId = sent.response.headers.get('X-Cognition-Run-Id');
  process.stdout.write(
    JSON.stringify({ sessionId, runId, events, toolCalls, exitCodes, text, answer, cost, lastId }),
  );
}

main(process.argv[2] ?? '').catch((error: unknown) => {
  process.stderr.write(String(error instanceof Error ? error.stack : error) + '\\n');
  process.exitCode = 1;
});
`;

/** Each marked line is a mistake the generated types must catch. */
const MISUSE = `
import type { components } from './api.js';
type AgentEvent = components['schemas']['AgentEvent'];

export function misuse(frame: AgentEvent): string {
  if (frame.event === 'tool_call') return frame.data.content; // @line data-of-another-event
  if (frame.event === 'tool_result') return frame.data.exit_code; // @line number-as-string
  if (frame.event === 'not_an_event') return ''; // @line unknown-event
  return frame.id;
}
`;

function tsconfig(files: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      strict: true,
      target: 'ES2022',
      module: 'node16',
      moduleResolution: 'node16',
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      types: ['node'],
      outDir: 'out',
      skipLibCheck: false,
    },
    files,
  });
}

describe('issue 32: a client generated from /openapi.json', () => {
  let fake: FakeOpenAIServer;
  let server: ServerProcess;
  const workspace = tempWorkspace();
  let dir: string;

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start();
    server = await startAgentServer(fake, workspace.dir);
    dir = await mkdtemp(path.join(os.tmpdir(), 'cognition-openapi-client-'));
    // The consumer resolves openapi-fetch and @types/node as an installed project would.
    await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  });

  afterAll(async () => {
    if (server) await server.stop();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    workspace.remove();
  });

  /** The server's logs, so a failure explains itself. */
  function logs(): string {
    return `--- server stdout ---\n${server.stdout.join('\n')}\n--- server stderr ---\n${server.stderr.join('')}`;
  }

  async function must(file: string, args: string[]): Promise<ExecResult> {
    const result = await attempt(file, args, dir);
    if (result.code !== 0) {
      throw new Error(
        `${path.basename(file)} ${args.join(' ')} failed (${result.code}):\n${result.stdout}\n${result.stderr}\n${logs()}`,
      );
    }
    return result;
  }

  it('generates, compiles and runs a whole streamed turn', async () => {
    const doc = await http(server.url, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.json?.['servers']).toEqual([expect.objectContaining({ url: server.url })]);
    await writeFile(path.join(dir, 'openapi.json'), doc.text);
    await must(process.execPath, [OPENAPI_TS, 'openapi.json', '-o', 'api.d.ts']);

    await writeFile(path.join(dir, 'consumer.mts'), CONSUMER);
    await writeFile(path.join(dir, 'tsconfig.json'), tsconfig(['consumer.mts']));
    await must(process.execPath, [TSC, '-p', 'tsconfig.json']);

    fake.enqueue(
      { toolCalls: [{ id: 'call_w', name: 'write_file', args: { path: 'a.txt', content: 'A1' } }] },
      { text: 'Wrote a.txt for you.' },
    );
    const { stdout } = await must(process.execPath, ['out/consumer.mjs', server.url]);
    const turn = JSON.parse(stdout) as {
      sessionId: string;
      runId: string;
      events: string[];
      toolCalls: string[];
      exitCodes: number[];
      text: string;
      answer: string | null;
      cost: number | null;
      lastId: string;
    };
    expect(turn.events[0]).toBe('status');
    expect(turn.events.slice(-3)).toEqual(['usage', 'status', 'done']);
    expect(turn.events).toEqual(expect.arrayContaining(['tool_call', 'tool_result', 'token']));
    expect(turn.toolCalls).toEqual(['write_file {"path":"a.txt","content":"A1"}']);
    expect(turn.exitCodes).toEqual([0]);
    expect(turn.text).toBe('Wrote a.txt for you.');
    expect(turn.answer).toBe('Wrote a.txt for you.');
    // The fake model has no price: the generated type allows the null the server sends.
    expect(turn.cost).toBeNull();
    expect(turn.lastId.startsWith(`${turn.runId}:`)).toBe(true);

    // The run as the server stored it: the same answer.
    const messages = await http(
      server.url,
      'GET',
      `/sessions/${turn.sessionId}/messages?order=asc&limit=50`,
    );
    const stored = (messages.json?.['messages'] as { role: string; content: string }[]).filter(
      (m) => m.role === 'assistant' && m.content !== '',
    );
    expect(stored.map((m) => m.content)).toEqual(['Wrote a.txt for you.']);
  });

  it('refuses, at compile time, a consumer that misreads an event', async () => {
    await writeFile(path.join(dir, 'misuse.mts'), MISUSE);
    await writeFile(path.join(dir, 'tsconfig.misuse.json'), tsconfig(['misuse.mts']));
    const result = await attempt(process.execPath, [TSC, '-p', 'tsconfig.misuse.json'], dir);
    expect(result.code).not.toBe(0);
    const lines = MISUSE.split('\n');
    const failing = new Set(
      [...result.stdout.matchAll(/misuse\.mts\((\d+),\d+\): error/g)].map(
        (m) => /@line (\S+)/.exec(lines[Number(m[1]) - 1] ?? '')?.[1] ?? `line ${m[1]}`,
      ),
    );
    expect([...failing].sort()).toEqual([
      'data-of-another-event',
      'number-as-string',
      'unknown-event',
    ]);
  });
});
