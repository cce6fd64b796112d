import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { langGraphConfigPath, loadUserGraphs } from './user-graphs';

const FIXTURES = join(__dirname, 'fixtures');
const CONFIG = join(FIXTURES, 'langgraph.json');

describe('graphs from langgraph.json (issue 28)', () => {
  let dir: string;
  // Loading a langgraph.json applies its `env` to this process: put it back afterwards.
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cognition-langgraph-json-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    for (const name of Object.keys(process.env)) {
      if (!(name in savedEnv)) delete process.env[name];
    }
    Object.assign(process.env, savedEnv);
  });

  async function configWith(content: unknown): Promise<string> {
    const path = join(dir, `langgraph-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  }

  it('loads TypeScript and JavaScript graphs: compiled, a builder compiled once, a factory', async () => {
    const graphs = await loadUserGraphs(CONFIG);
    expect(graphs.list().map((g) => [g.graphId, g.kind])).toEqual([
      ['compiled', 'compiled'],
      ['uncompiled', 'compiled'],
      ['factory', 'factory'],
      ['echo', 'compiled'],
    ]);
    expect(graphs.config?.env).toEqual({ GREETING: 'hello' });

    const run = async (id: string, configurable: Record<string, unknown> = {}) => {
      const graph = await graphs.get(id)?.graph({ configurable });
      if (!graph) throw new Error(`no graph ${id}`);
      return graph.invoke({ text: 'hi' }, { configurable });
    };
    await expect(run('compiled')).resolves.toEqual({ text: 'hi!' });
    await expect(run('uncompiled')).resolves.toEqual({ text: 'hi?' });
    // The factory sees each run's config.
    await expect(run('factory', { suffix: ' :)' })).resolves.toEqual({ text: 'hi :)' });
    await expect(run('echo')).resolves.toEqual({ text: 'echo: hi' });
    expect(graphs.get('missing')).toBeUndefined();
  });

  it('loads the module once: the same compiled instance for every run', async () => {
    const graphs = await loadUserGraphs(CONFIG);
    const graph = graphs.get('compiled');
    if (!graph) throw new Error('no graph compiled');
    expect(await graph.graph({})).toBe(graph.loaded);
    expect(await graph.graph({})).toBe(await graph.graph({ configurable: { x: 1 } }));
  });

  it.each([
    [
      'a missing export',
      { graphs: { g: `${FIXTURES}/graphs.ts:nope` } },
      /graph "g" .*graphs\.ts, export "nope".*no such export \(the module exports: .*compiled/,
    ],
    [
      'an export that is no graph',
      { graphs: { g: `${FIXTURES}/graphs.ts:notAGraph` } },
      /graph "g" .*export "notAGraph".*neither a graph/,
    ],
    [
      'a missing module',
      { graphs: { g: `${FIXTURES}/absent.ts:graph` } },
      /graph "g" .*absent\.ts.*does not exist/,
    ],
    ['no graphs', { graphs: {} }, /graphs: lists no graph/],
    ['a bad graph id', { graphs: { 'a b': './x.ts:g' } }, /graphs\.a b: graph ids are/],
    ['not JSON', '{ "graphs": ', /not valid JSON/],
  ])('refuses %s at start, naming the file and the graph', async (_what, content, message) => {
    const path = await configWith(content);
    const error = await loadUserGraphs(path).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain(path);
    expect(error?.message).toMatch(message);
  });

  it('gives a module the default export of a CommonJS module it default-imports (node:path)', async () => {
    // Regression: the default import of a built-in was undefined, so the graph failed when run.
    const path = await configWith({ graphs: { g: `${FIXTURES}/default-imports.mjs:graph` } });
    const graph = await (await loadUserGraphs(path)).get('g')?.graph({});
    await expect(graph?.invoke({ text: '/a/b/file.txt' })).resolves.toEqual({
      text: 'file.txt string',
    });
  });

  it('awaits an export that is a promise of a graph', async () => {
    const path = await configWith({ graphs: { g: `${FIXTURES}/graphs.ts:promised` } });
    const graph = await (await loadUserGraphs(path)).get('g')?.graph({});
    await expect(graph?.invoke({ text: 'hi' })).resolves.toEqual({ text: 'hi~' });
  });

  it("gives graph code the SDK's getLogger(): our logger, the meta as fields", async () => {
    const path = await configWith({ graphs: { g: `${FIXTURES}/logging.ts:graph` } });
    const lines: [object, string | undefined][] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (obj: object, msg?: string) => void lines.push([obj, msg]),
      error: () => undefined,
    };
    const graph = await (await loadUserGraphs(path, logger)).get('g')?.graph({});
    await expect(graph?.invoke({ text: 'hi' })).resolves.toEqual({ text: 'hi.' });
    expect(lines).toEqual([[{ source: 'graph', text: 'hi' }, 'seen']]);
  });

  it("applies env before the graphs load (the server's own variables win) and reads LANGGRAPH_CONFIG", async () => {
    process.env['COGNITION_TEST_GRAPH_ENV_KEPT'] = 'from the server';
    const path = await configWith({
      graphs: { echo: `${FIXTURES}/echo.mjs` },
      env: {
        COGNITION_TEST_GRAPH_ENV_NEW: 'from the file',
        COGNITION_TEST_GRAPH_ENV_KEPT: 'from the file',
        LANGGRAPH_CONFIG: JSON.stringify({
          echo: { configurable: { model_name: 'openai' }, context: { model: 'unknown' } },
        }),
      },
    });
    const graphs = await loadUserGraphs(path);
    expect(process.env['COGNITION_TEST_GRAPH_ENV_NEW']).toBe('from the file');
    expect(process.env['COGNITION_TEST_GRAPH_ENV_KEPT']).toBe('from the server');
    expect(graphs.defaultsOf('echo')).toEqual({
      config: { configurable: { model_name: 'openai' } },
      context: { model: 'unknown' },
    });
    expect(graphs.defaultsOf('other')).toEqual({ config: {}, context: {} });
  });

  it('names a module that throws while loading', async () => {
    const broken = join(dir, 'broken.mjs');
    await writeFile(broken, 'throw new Error("boom at import");\n');
    const path = await configWith({ graphs: { g: `${broken}:graph` } });
    await expect(loadUserGraphs(path)).rejects.toThrow(
      /graph "g" .*failed to load: boom at import/,
    );
  });

  it('finds the file from the setting, else langgraph.json in the working directory', () => {
    expect(langGraphConfigPath('conf/lg.json', '/srv/app')).toBe('/srv/app/conf/lg.json');
    expect(langGraphConfigPath(undefined, FIXTURES)).toBe(CONFIG);
    expect(langGraphConfigPath(undefined, dir)).toBeNull();
  });
});
