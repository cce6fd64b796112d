import { ConfigRegistry } from '../../registry/config-registry';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { Session } from '@cognition/contracts';
import { createMemoryStorage } from '@cognition/storage-memory';
import { AgentRegistry } from '../../agents/registry';
import { InMemoryEventLog } from '../../events/event-log';
import { newRunId } from '../../ids';
import { silentLogger } from '../../logger';
import { ProviderRegistry } from '../../providers/registry';
import { FAKE_PROVIDERS } from '../../testing/test-runtime';
import { FakeExecutionBackendFactory } from '../../testing/fake-execution-backend';
import { NOOP_RUN_OBSERVER } from '../../telemetry/observer';
import { ScriptedChatModel } from '../../testing/scripted-chat-model';
import { McpManager } from '../../mcp/mcp-manager';
import { ToolCatalog } from '../../tools/catalog';
import { ActiveRuns } from '../coordination/active-runs';
import { InProcessRunControl } from '../coordination/in-process-run-control';
import type { RunQueue } from '../coordination/ports';
import type { RunContext } from '../run-context';
import { RunExecutor } from './run-executor';
import type { RunEnding } from '../run-finisher';
import { RunSlots } from '../coordination/run-slots';
import { UserGraphs } from '../../user-graphs/user-graphs';

describe('RunExecutor', () => {
  const storage = createMemoryStorage();
  let workspace: string;
  let ctx: RunContext;
  let endings: RunEnding[];
  let session: Session;
  const model = new ScriptedChatModel();
  const control = new InProcessRunControl();

  beforeAll(async () => {
    await storage.initialize();
    workspace = await mkdtemp(join(tmpdir(), 'cognition-executor-'));
  });
  afterAll(async () => {
    await storage.close();
    await rm(workspace, { recursive: true, force: true });
  });
  beforeEach(async () => {
    const log = new InMemoryEventLog();
    const breakers = new CircuitBreakerRegistry();
    ctx = {
      storage,
      sandbox: new FakeExecutionBackendFactory(),
      registry: new ConfigRegistry({
        agents: new AgentRegistry([]),
        providers: new ProviderRegistry(FAKE_PROVIDERS),
        store: storage.registry,
      }),
      log,
      breakers,
      breakerOptions: undefined,
      chatModelFactory: () => model,
      catalog: new ToolCatalog(),
      mcp: new McpManager({}, breakers, silentLogger),
      logger: silentLogger,
      workspaceRoot: workspace,
      maxSteps: 10,
      observer: NOOP_RUN_OBSERVER,
      skills: null,
      userGraphs: UserGraphs.empty(),
    };
    endings = [];
    session = await storage.sessions.create({ agentName: 'default', config: {} }, {});
  });

  async function start(queue: RunQueue) {
    const message = await storage.messages.create({
      sessionId: session.id,
      role: 'user',
      content: 'hello',
    });
    const { run } = await storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'queued',
      inputMessageId: message.id,
    });
    const active = new ActiveRuns(control, ctx.log, silentLogger).add(run.id, session.id, {});
    const executor = new RunExecutor(ctx, queue, {
      finish: (_run, _session, ending) => {
        endings.push(ending);
        return Promise.resolve();
      },
    });
    const done = executor.execute(active, { session, userMessage: message, callbackUrl: null });
    return { run, active, done };
  }

  it('runs the turn on the checkpoint thread and hands over a completed outcome', async () => {
    model.push({ text: 'hi there' });
    const { run, done } = await start(new RunSlots(1));
    await done;
    expect(endings.map((e) => e.outcome)).toEqual([{ kind: 'completed' }]);
    const assistantId = endings[0]?.lastAssistantId;
    expect(assistantId).toEqual(expect.any(String));
    expect((await storage.messages.get(session.id, assistantId ?? '', {}))?.content).toBe(
      'hi there',
    );
    expect((await storage.runs.get(run.id))?.status).toBe('running');
  });

  it('ends a run cancelled while waiting for a slot without starting it', async () => {
    const slots = new RunSlots(1);
    const hold = await slots.acquire(new AbortController().signal);
    const { run, done } = await start(slots);
    await control.cancel(run.id, 'interrupted');
    await done;
    hold?.();
    expect(endings).toEqual([
      { outcome: { kind: 'interrupted' }, meter: null, lastAssistantId: null, callbackUrl: null },
    ]);
    expect((await storage.runs.get(run.id))?.status).toBe('queued');
    expect(slots.active).toBe(0);
  });

  it('reports a failure of the run as a failed outcome with a typed error', async () => {
    model.push({ error: new Error('boom') });
    const { done } = await start(new RunSlots(1));
    await done;
    expect(endings[0]?.outcome).toMatchObject({
      kind: 'failed',
      error: { code: 'PROVIDER_ERROR' },
    });
  });
});
