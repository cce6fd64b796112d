import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { TestRuntime } from '../testing/test-runtime';
import {
  FAKE_PROVIDERS,
  contextAgent,
  createTestRuntime,
  isSummaryCall,
  sendAndCollect,
  waitFor,
} from '../testing/test-runtime';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import type { ModelCallRecord, RunEndOutcome, RunObserver } from './observer';

type Seen =
  | { kind: 'started'; runId: string; resumed: boolean }
  | { kind: 'first_token'; runId: string }
  | { kind: 'model_call'; call: ModelCallRecord }
  | { kind: 'ended'; runId: string; outcome: RunEndOutcome };

function recordingObserver(seen: Seen[]): RunObserver {
  return {
    runStarted: ({ runId, resumed }) => seen.push({ kind: 'started', runId, resumed }),
    firstToken: ({ runId }) => seen.push({ kind: 'first_token', runId }),
    modelCall: (call) => seen.push({ kind: 'model_call', call }),
    runEnded: ({ runId, outcome }) => seen.push({ kind: 'ended', runId, outcome }),
  };
}

const PRICED = {
  ...FAKE_PROVIDERS,
  prices: { 'fake-model': { inputPerMillion: 1, outputPerMillion: 2 } },
};

describe('runtime telemetry', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  let rt: TestRuntime | undefined;
  let seen: Seen[];

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => {
    seen = [];
    exporter.reset();
  });
  afterEach(async () => {
    await rt?.cleanup();
    rt = undefined;
  });

  async function runtime(model: ScriptedChatModel, agents = {}) {
    rt = await createTestRuntime({
      chatModel: model,
      providers: PRICED,
      extra: { observer: recordingObserver(seen) },
      ...agents,
    });
    return rt;
  }

  /** The run span ends once the run finished, just after its terminal event reached the stream. */
  async function finishedRunSpan(): Promise<ReadableSpan | undefined> {
    await waitFor(() => spansNamed('cognition.run').length > 0);
    return spansNamed('cognition.run')[0];
  }

  function spansNamed(name: string): ReadableSpan[] {
    return exporter.getFinishedSpans().filter((span) => span.name === name);
  }

  function parentOf(span: ReadableSpan): string | undefined {
    return span.parentSpanContext?.spanId;
  }

  it('reports a turn to the observer: start, each model call with tokens and cost, first token, end', async () => {
    const rt = await runtime(
      new ScriptedChatModel([
        {
          toolCalls: [{ name: 'ls', args: {}, id: 'c1' }],
          usage: { input_tokens: 100, output_tokens: 10 },
        },
        { text: ['Hel', 'lo'], usage: { input_tokens: 200, output_tokens: 20 } },
      ]),
    );
    const session = await rt.createSession();
    const { run } = await sendAndCollect(rt, session, 'list files');
    expect(seen).toEqual([
      { kind: 'started', runId: run.id, resumed: false },
      {
        kind: 'model_call',
        call: {
          runId: run.id,
          provider: 'fake',
          model: 'fake-model',
          inputTokens: 100,
          outputTokens: 10,
          estimated: false,
          costUsd: 0.00012,
        },
      },
      { kind: 'first_token', runId: run.id },
      {
        kind: 'model_call',
        call: {
          runId: run.id,
          provider: 'fake',
          model: 'fake-model',
          inputTokens: 200,
          outputTokens: 20,
          estimated: false,
          costUsd: 0.00024,
        },
      },
      { kind: 'ended', runId: run.id, outcome: 'completed' },
    ]);
  });

  it("reports a subagent's model calls through the run's meter, estimated when unreported", async () => {
    const rt = await runtime(
      new ScriptedChatModel([
        {
          toolCalls: [{ name: 'task', args: { agent: 'helper', description: 'do it' }, id: 'd1' }],
        },
        { text: 'done by the helper' },
        { text: 'final', usage: { input_tokens: 5, output_tokens: 1 } },
      ]),
      {
        agents: [
          {
            name: 'helper',
            description: 'Helps',
            mode: 'subagent',
            tools: ['read_file'],
            model: null,
            temperature: null,
            systemPrompt: 'You help.',
            interruptOn: {},
            mcpServers: [],
            skills: null,
            source: 'test',
          },
        ],
      },
    );
    const session = await rt.createSession();
    await sendAndCollect(rt, session, 'delegate');
    const calls = seen.flatMap((s) => (s.kind === 'model_call' ? [s.call] : []));
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => c.estimated)).toEqual([true, true, false]);
    expect(calls.every((c) => c.inputTokens > 0)).toBe(true);
  });

  it('traces a turn: the run span holds the model calls with tokens and the tool call', async () => {
    const rt = await runtime(
      new ScriptedChatModel([
        {
          toolCalls: [{ name: 'ls', args: {}, id: 'c1' }],
          usage: { input_tokens: 100, output_tokens: 10 },
        },
        { text: 'two files', usage: { input_tokens: 200, output_tokens: 20 } },
      ]),
    );
    const session = await rt.createSession();
    const { run } = await sendAndCollect(rt, session, 'list files');
    const runSpan = await finishedRunSpan();
    expect(runSpan?.attributes).toMatchObject({
      'cognition.run.id': run.id,
      'cognition.session.id': session.id,
      'cognition.run.outcome': 'completed',
      'gen_ai.agent.name': 'default',
    });
    const chats = spansNamed('chat fake-model');
    expect(chats.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'gen_ai.provider.name': 'fake',
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 10,
        'cognition.usage.estimated': false,
      }),
      expect.objectContaining({
        'gen_ai.usage.input_tokens': 200,
        'gen_ai.usage.output_tokens': 20,
      }),
    ]);
    const [tool] = spansNamed('execute_tool ls');
    expect(tool?.attributes).toMatchObject({
      'gen_ai.tool.name': 'ls',
      'gen_ai.tool.call.id': 'c1',
      'cognition.tool.exit_code': 0,
    });
    const runSpanId = runSpan?.spanContext().spanId;
    expect([...chats, tool].map((span) => span && parentOf(span))).toEqual([
      runSpanId,
      runSpanId,
      runSpanId,
    ]);
    expect(new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it("reports and traces a context summary's model call like the agent's", async () => {
    const model = new ScriptedChatModel();
    const rt = await runtime(model, {
      agents: [contextAgent({ max_tokens: 400, keep_last_messages: 2 })],
    });
    const session = await rt.createSession('long');
    const filler = 'the quick brown fox jumps over the lazy dog and keeps on running';
    let compacted = false;
    for (let turn = 1; turn <= 20 && !compacted; turn += 1) {
      const reply = (call: Parameters<typeof isSummaryCall>[0]) =>
        isSummaryCall(call)
          ? { text: 'summary', usage: { input_tokens: 1000, output_tokens: 100 } }
          : { text: `answer-${turn}: ${filler}`, usage: { input_tokens: 7, output_tokens: 3 } };
      model.push(reply, reply);
      exporter.reset();
      const { events } = await sendAndCollect(rt, session, `turn-${turn}: ${filler}`);
      compacted = events.some((e) => e.event.type === 'compaction');
    }
    expect(compacted).toBe(true);
    const calls = seen.flatMap((s) => (s.kind === 'model_call' ? [s.call] : []));
    expect(calls.filter((c) => c.inputTokens === 1000 && c.outputTokens === 100)).toHaveLength(1);
    const summary = spansNamed('chat fake-model').filter(
      (span) => span.attributes['cognition.model_call.purpose'] === 'summary',
    );
    expect(summary.map((span) => span.attributes['gen_ai.usage.input_tokens'])).toEqual([1000]);
    const parent = summary[0] && parentOf(summary[0]);
    await waitFor(() =>
      spansNamed('cognition.run').some((span) => span.spanContext().spanId === parent),
    );
  });

  it('ends an aborted model call once, with the partial answer counted and marked aborted', async () => {
    const rt = await runtime(new ScriptedChatModel([{ text: 'partial answer', hang: true }]));
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'go',
    });
    await waitFor(() => seen.some((s) => s.kind === 'first_token'));
    await rt.runs.abort(session.id, {});
    await finishedRunSpan();
    expect(seen.at(-1)).toEqual({ kind: 'ended', runId: run.id, outcome: 'aborted' });
    const chats = spansNamed('chat fake-model');
    expect(chats).toHaveLength(1);
    expect(chats[0]?.attributes).toMatchObject({
      'cognition.aborted': true,
      'cognition.usage.estimated': true,
    });
    expect(chats[0]?.status.code).toBe(0);
  });

  it('marks a failed run and its failed model call as errors', async () => {
    const rt = await runtime(new ScriptedChatModel([{ error: new Error('provider down') }]));
    const session = await rt.createSession();
    const { run } = await sendAndCollect(rt, session, 'hi');
    expect(seen.at(-1)).toEqual({ kind: 'ended', runId: run.id, outcome: 'failed' });
    const runSpan = await finishedRunSpan();
    expect(runSpan?.status.code).toBe(2);
    expect(runSpan?.attributes['error.type']).toBe('PROVIDER_ERROR');
    const [chat] = spansNamed('chat fake-model');
    expect(chat?.status).toMatchObject({
      code: 2,
      message: expect.stringContaining('provider down') as unknown,
    });
  });
});
