import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentEventEnvelope } from '@cognition/client';
import { createCognitionClient, resumeRun, streamMessage } from '@cognition/client';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer, createSession, startAgentServer } from './testing/agent-server';
import { http } from './testing/http';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Human in the loop through the built server and the typed client: a run pauses before a tool
 * its agent (an agent file of the workspace) lists in `interrupt_on`, the server is killed
 * (SIGKILL) while the run waits, and a new process on the same database resumes it with the
 * person's decision: the command runs then, on the same run id, its events continuing.
 */

const CAREFUL_AGENT = `---
description: Runs commands only once a person approves them.
tools: [ls, read_file, execute]
interrupt_on:
  execute: { allowed: [approve, reject] }
---

You run shell commands for the user, one at a time.
`;

/** A user message asks for `echo <word>`; a tool result is quoted back. */
function reply(request: RecordedRequest) {
  const last = (request.body.messages ?? []).at(-1);
  if (last?.role === 'tool') return { text: `The tool said: ${String(last.content).trim()}` };
  return { toolCalls: [{ name: 'execute', args: { command: 'echo approved-after-restart' } }] };
}

async function drain(stream: AsyncIterable<AgentEventEnvelope>): Promise<AgentEventEnvelope[]> {
  const out: AgentEventEnvelope[] = [];
  for await (const envelope of stream) out.push(envelope);
  return out;
}

function describeOn(
  name: string,
  database: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>,
): void {
  describe(`a run waiting for a decision survives a kill -9, ${name}`, () => {
    let fake: FakeOpenAIServer;
    const workspace = tempWorkspace('cognition-hitl-');
    let db: { env: Record<string, string>; drop(): Promise<void> };
    let server: ServerProcess | undefined;
    const start = () => startAgentServer(fake, workspace.dir, db.env);

    beforeAll(async () => {
      mkdirSync(path.join(workspace.dir, '.cognition', 'agents'), { recursive: true });
      writeFileSync(path.join(workspace.dir, '.cognition', 'agents', 'careful.md'), CAREFUL_AGENT);
      fake = await FakeOpenAIServer.start({ fallback: reply });
      db = await database();
      server = await start();
    }, 60_000);
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await fake.close();
      await db.drop();
      workspace.remove();
    });

    it('pauses, is resumed by the next process with the decision, and finishes', async () => {
      if (!server) throw new Error('no server');
      const sessionId = await createSession(server.url, { agent_name: 'careful' });
      const before = createCognitionClient({ url: `${server.url}/trpc` });
      const first = await drain(streamMessage(before, { sessionId, content: 'say it' }));
      const interrupt = first.at(-1);
      expect(interrupt?.event).toMatchObject({
        type: 'interrupt',
        tool_calls: [
          {
            name: 'execute',
            args: { command: 'echo approved-after-restart' },
            allowed: ['approve', 'reject'],
          },
        ],
      });
      const runId = interrupt?.runId ?? '';
      const callId =
        interrupt?.event.type === 'interrupt' ? (interrupt.event.tool_calls[0]?.id ?? '') : '';

      await server.stop('SIGKILL');
      server = await start();
      const after = createCognitionClient({ url: `${server.url}/trpc` });
      const { runs } = await after.runs.list.query({ sessionId, status: 'requires_action' });
      expect(runs.map((run) => run.id)).toEqual([runId]);
      // Still paused: a new message is refused, naming the run.
      const refused = await http(server.url, 'POST', `/sessions/${sessionId}/messages`, {
        body: { content: 'hello?' },
      });
      expect(refused.status).toBe(409);
      expect(String(refused.json?.['detail'])).toContain(`/runs/${runId}/resume`);

      const rest = await drain(
        resumeRun(after, {
          sessionId,
          runId,
          decisions: [{ tool_call_id: callId, type: 'approve' }],
        }),
      );
      expect(rest[0]?.event).toMatchObject({ type: 'reconnected', last_event_id: interrupt?.id });
      expect(rest.slice(1).every((e) => e.runId === runId && e.id > (interrupt?.id ?? ''))).toBe(
        true,
      );
      const result = rest.find((e) => e.event.type === 'tool_result')?.event;
      expect(result).toMatchObject({ output: 'approved-after-restart\n', exit_code: 0 });
      expect(rest.at(-1)?.event).toMatchObject({
        type: 'done',
        assistant_data: { content: 'The tool said: approved-after-restart' },
      });
      const run = await after.runs.get.query({ sessionId, runId });
      expect(run).toMatchObject({ status: 'completed', pendingAction: null });
    }, 60_000);
  });
}

describeOn('SQLite', () => sqliteServerDatabase('cognition-hitl-sqlite-'));

describeOn('PostgreSQL', postgresServerDatabase);
