import type { TestApiServer } from '@cognition/api/testing';
import { startTestApiServer } from '@cognition/api/testing';
import {
  AgentRegistry,
  ContextInspector,
  InMemoryEventLog,
  ProviderRegistry,
  RegistryService,
  RunManager,
} from '@cognition/runtime';
import { FakeExecutionBackendFactory, ScriptedChatModel } from '@cognition/runtime/testing';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { attempt, succeed as exec } from './testing/exec';

/**
 * The client as a consumer gets it: build and pack @cognition/client, install the tarball in a
 * directory outside the monorepo (so no workspace source or alias can leak in), typecheck a
 * consumer script against the bundled .d.ts (and prove a wrong one fails), then run it against a
 * real router and runtime (scripted model): sessions, errors, and a streamed message.
 */

const repoRoot = path.resolve(__dirname, '../../..');
const clientRoot = path.join(repoRoot, 'libs/client');
const API_KEY = 'sk-package-e2e';

const consumerMain = (url: string): string => `
import { createCognitionClient, streamMessage } from '@cognition/client';
import type { AgentEventEnvelope, RouterOutputs, Session } from '@cognition/client';

const client = createCognitionClient({
  url: ${JSON.stringify(url)},
  apiKey: ${JSON.stringify(API_KEY)},
  scopes: { user: 'package-user' },
});

async function main(): Promise<void> {
  const created: Session = await client.sessions.create.mutate({
    title: 'from the tarball',
    metadata: { via: 'npm-pack' },
  });
  const page: RouterOutputs['sessions']['list'] = await client.sessions.list.query({ limit: 10 });
  const version: string = (await client.health.get.query()).version;
  let notFoundCode: unknown = null;
  try {
    await client.sessions.get.query({ id: 'does-not-exist' });
  } catch (error) {
    notFoundCode = (error as { data?: { code?: unknown } }).data?.code;
  }
  const streamed: AgentEventEnvelope[] = [];
  for await (const envelope of streamMessage(client, { sessionId: created.id, content: 'hi' })) {
    streamed.push(envelope);
  }
  const text = streamed
    .map(({ event }) => (event.type === 'token' ? event.content : ''))
    .join('');
  console.log(
    JSON.stringify({
      id: created.id,
      title: created.title,
      createdAtIsDate: created.createdAt instanceof Date,
      listed: page.sessions.map((session) => session.id),
      total: page.total,
      version,
      notFoundCode,
      eventTypes: streamed.map(({ event }) => event.type),
      text,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  throw error;
});
`;

/** Each line is a type error a real (non-`any`) client type must catch. */
const consumerTypeErrors = `
import { createCognitionClient, streamMessage } from '@cognition/client';

const client = createCognitionClient({ url: 'http://127.0.0.1:1/trpc' });

export async function misuse(): Promise<void> {
  await client.sessions.create.mutate({ title: 42 }); // @line title-number
  await client.sessions.get.query({ identifier: 'x' }); // @line unknown-field
  const total: string = (await client.sessions.list.query()).total; // @line total-string
  await client.sessions.archive.mutate({ id: 'x' }); // @line unknown-procedure
  createCognitionClient({ url: 'x', scopes: { user: 1 } }); // @line scope-number
  for await (const e of streamMessage(client, { sessionId: 's', text: 'hi' })) void e; // @line send-field
  void total;
}
`;

function tsconfig(entry: string): string {
  return JSON.stringify(
    {
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'node16',
        moduleResolution: 'node16',
        // tRPC's own declarations use Disposable; checked because skipLibCheck is off.
        lib: ['ES2022', 'DOM', 'ESNext.Disposable'],
        types: [],
        outDir: 'out',
        skipLibCheck: false,
      },
      files: [entry],
    },
    null,
    2,
  );
}

describe('@cognition/client as an npm package', () => {
  let workDir: string;
  let storage: StorageBackend;
  let runs: RunManager;
  let server: TestApiServer;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'cognition-client-pkg-'));
    storage = createMemoryStorage();
    await storage.initialize();
    await mkdir(path.join(workDir, 'workspaces'));
    const model = new ScriptedChatModel([{ text: ['Hello ', 'from ', 'the run'] }]);
    const agents = new AgentRegistry();
    const providers = new ProviderRegistry({
      providers: [
        { id: 'fake', kind: 'openai_compatible', model: 'm', baseUrl: 'http://127.0.0.1:9/v1' },
      ],
    });
    runs = new RunManager({
      storage,
      sandbox: new FakeExecutionBackendFactory(),
      agents,
      providers,
      eventLog: new InMemoryEventLog(),
      workspaceRoot: path.join(workDir, 'workspaces'),
      chatModelFactory: () => model,
    });
    server = await startTestApiServer({
      storage,
      runs,
      context: new ContextInspector({ storage, agents, providers }),
      registry: new RegistryService(runs.registry, storage.registry),
      version: '9.9.9-pkg',
      auth: {
        scoping: { enabled: true, keys: ['user'] },
        apiKeys: [{ id: 'package-test', key: API_KEY }],
      },
    });
  });

  afterAll(async () => {
    await server?.close();
    await runs?.shutdown(1000);
    await storage?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('builds, packs, installs outside the repo, typechecks and talks to a server', async () => {
    // The tarball as `npm run build` makes it (libs/client/pack.mjs), into a folder of this test.
    const packDir = path.join(workDir, 'pack');
    await exec(
      process.execPath,
      [path.join(clientRoot, 'pack.mjs'), '--out-dir', packDir],
      repoRoot,
    );
    const [filename] = await readdir(packDir);
    expect(filename).toMatch(/^cognition-client-\d+\.\d+\.\d+.*\.tgz$/);
    const tarball = path.join(packDir, filename ?? '');
    const listed = await exec('tar', ['tzf', tarball], packDir);
    const shipped = listed.stdout
      .trim()
      .split('\n')
      .map((file) => file.replace(/^package\//, ''))
      .sort();
    expect(shipped).toEqual(
      expect.arrayContaining([
        'README.md',
        'dist/index.d.ts',
        'dist/index.js',
        'dist/index.mjs',
        'package.json',
      ]),
    );
    expect(shipped.filter((file) => file.startsWith('src/'))).toEqual([]);

    const consumer = path.join(workDir, 'consumer');
    await mkdir(path.join(consumer, 'src'), { recursive: true });
    await writeFile(
      path.join(consumer, 'package.json'),
      JSON.stringify({ name: 'cognition-client-consumer', private: true, type: 'commonjs' }),
    );
    await exec(
      'npm',
      [
        'install',
        tarball,
        'typescript@5.9',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      consumer,
    );

    await writeFile(path.join(consumer, 'src/main.ts'), consumerMain(server.url));
    await writeFile(path.join(consumer, 'src/misuse.ts'), consumerTypeErrors);
    await writeFile(path.join(consumer, 'tsconfig.json'), tsconfig('src/main.ts'));
    await writeFile(path.join(consumer, 'tsconfig.misuse.json'), tsconfig('src/misuse.ts'));
    const tsc = path.join(consumer, 'node_modules/typescript/bin/tsc');

    // The typed consumer compiles with strict settings and full library checking...
    await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], consumer);

    // ...and the misuse file fails, once per deliberate mistake: the types are real, not `any`.
    const failure = await attempt(
      process.execPath,
      [tsc, '-p', 'tsconfig.misuse.json', '--noEmit'],
      consumer,
    );
    expect(failure.code).not.toBe(0);
    const diagnostics = failure.stdout + failure.stderr;
    const lines = consumerTypeErrors.split('\n');
    for (const marker of [
      'title-number',
      'unknown-field',
      'total-string',
      'unknown-procedure',
      'scope-number',
      'send-field',
    ]) {
      const lineNumber = lines.findIndex((line) => line.includes(`@line ${marker}`)) + 1;
      expect(diagnostics).toMatch(new RegExp(`src/misuse\\.ts\\(${lineNumber},\\d+\\): error TS`));
    }
    expect(diagnostics).not.toMatch(/node_modules\/@cognition\/client/);

    const ran = await exec(process.execPath, ['out/main.js'], consumer);
    const result = JSON.parse(ran.stdout.trim()) as {
      id: string;
      title: string;
      createdAtIsDate: boolean;
      listed: string[];
      total: number;
      version: string;
      notFoundCode: string;
      eventTypes: string[];
      text: string;
    };
    expect(result).toMatchObject({
      title: 'from the tarball',
      createdAtIsDate: true,
      total: 1,
      version: '9.9.9-pkg',
      notFoundCode: 'SESSION_NOT_FOUND',
      eventTypes: ['status', 'token', 'token', 'token', 'usage', 'status', 'done'],
      text: 'Hello from the run',
    });
    expect(result.listed).toEqual([result.id]);

    const stored = await storage.sessions.get(result.id, { user: 'package-user' });
    expect(stored).toMatchObject({ title: 'from the tarball', scopes: { user: 'package-user' } });
    const seenByServer = server.requests.filter((request) =>
      request.path.includes('sessions.create'),
    );
    expect(seenByServer[0]?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      'x-cognition-scope-user': 'package-user',
    });
  }, 300_000);
});
