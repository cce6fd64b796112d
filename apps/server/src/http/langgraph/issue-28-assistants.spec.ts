import type { AssistantStore } from '@cognition/storage';
import type { CompiledUserGraph } from '@cognition/runtime';
import { UserGraphs } from '@cognition/runtime';
import type { Assistant } from './assistants';
import { AssistantSearchSchema, Assistants, matching, searchPage } from './assistants';
import { graphKwargs } from './graph-runs';

/** Search, count and run kwargs of the LangGraph API's assistants (issue 28). */
function assistant(id: string, name: string, createdAt: string, metadata = {}): Assistant {
  return {
    assistant_id: id,
    graph_id: 'g',
    name,
    description: null,
    config: {},
    context: {},
    metadata,
    version: 1,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

const resolved = (a: Assistant) => ({
  assistant: a,
  target: { kind: 'agent', name: 'default' } as const,
  stored: true,
});

describe('assistant search (issue 28)', () => {
  const all = [
    assistant('a', 'Alpha', '2026-01-01T00:00:00.000Z', { team: { n: 1 } }),
    assistant('b', 'beta', '2026-01-02T00:00:00.000Z', { team: 'x' }),
    assistant('c', 'Gamma', '2026-01-03T00:00:00.000Z'),
  ].map(resolved);

  it('matches the name case-insensitively and metadata by JSON value', () => {
    expect(matching(all, { name: 'A' }).map((a) => a.assistant_id)).toEqual(['a', 'b', 'c']);
    expect(matching(all, { name: 'ALP' }).map((a) => a.assistant_id)).toEqual(['a']);
    expect(matching(all, { metadata: { team: { n: 1 } } }).map((a) => a.assistant_id)).toEqual([
      'a',
    ]);
  });

  it('pages newest first by default, sorts ascending by a named field, selects fields', () => {
    const page = (body: unknown) =>
      searchPage(
        all.map((a) => a.assistant),
        AssistantSearchSchema.parse(body),
      );
    expect(page({}).map((a) => a['assistant_id'])).toEqual(['c', 'b', 'a']);
    expect(page({ limit: 1, offset: 1 }).map((a) => a['assistant_id'])).toEqual(['b']);
    expect(page({ sort_by: 'name' }).map((a) => a['name'])).toEqual(['Alpha', 'Gamma', 'beta']);
    expect(page({ sort_by: 'name', sort_order: 'desc', select: ['name'] })).toEqual([
      { name: 'beta' },
      { name: 'Gamma' },
      { name: 'Alpha' },
    ]);
  });
});

describe('graph run kwargs over an assistant (issue 28)', () => {
  it("puts the run's config over the assistant's, configurable key by key", () => {
    const kwargs = graphKwargs(
      { graphId: 'g', nodes: [] },
      { input: { x: 1 }, config: { configurable: { a: 'run' }, tags: ['run'] }, context: { c: 2 } },
      {
        assistant_id: 'asst',
        config: {
          configurable: { a: 'assistant', b: 'assistant' },
          tags: ['a'],
          recursion_limit: 5,
        },
        context: { c: 1, d: 1 },
      },
    );
    expect(kwargs).toMatchObject({
      graph_id: 'g',
      assistant_id: 'asst',
      config: { configurable: { a: 'run', b: 'assistant' }, tags: ['run'], recursion_limit: 5 },
      context: { c: 2, d: 1 },
    });
  });

  it('leaves configurable out when neither sets it', () => {
    const kwargs = graphKwargs(
      { graphId: 'g', nodes: [] },
      {},
      { assistant_id: 'asst', config: {}, context: {} },
    );
    expect(kwargs.config).toEqual({});
    expect(kwargs.stream_mode).toEqual(['values']);
  });
});

describe("a graph's system assistant (issue 28)", () => {
  it('takes its config and context from LANGGRAPH_CONFIG, as LangGraph does', async () => {
    const compiled = {} as CompiledUserGraph;
    const graph = {
      graphId: 'g',
      file: 'g.ts',
      exportName: 'graph',
      kind: 'compiled' as const,
      loaded: compiled,
      graph: () => Promise.resolve(compiled),
    };
    const defaults = { config: { configurable: { model_name: 'openai' } }, context: { m: 1 } };
    const graphs = new UserGraphs(null, [graph], new Map([['g', defaults]]));
    const store = { list: () => Promise.resolve([]) } as unknown as AssistantStore;
    const assistants = new Assistants(graphs, () => Promise.resolve([]), store);
    const [system] = await assistants.list({});
    expect(system?.assistant).toMatchObject({
      graph_id: 'g',
      metadata: { created_by: 'system' },
      ...defaults,
    });
  });
});
