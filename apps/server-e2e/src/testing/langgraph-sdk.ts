import path from 'node:path';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { Client } from '@langchain/langgraph-sdk';
import { fakeProviderEnv } from './agent-server';
import type { ServerDatabase } from './postgres';
import type { ServerProcess } from './server-process';
import { startServerProcess, tempWorkspace } from './server-process';

/*
 * What the specs that drive the LangGraph API with the official SDK share.
 */

/** The SDK's HTTPError of a call expected to fail: the status and the raw body. */
export async function sdkFailure(
  promise: Promise<unknown>,
): Promise<{ status: number; body: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { status?: number; text?: string };
    return { status: e.status ?? -1, body: e.text ? (JSON.parse(e.text) as unknown) : null };
  }
  throw new Error('expected the request to fail');
}

/** The model of our agents in these specs: answers "You said: <the last user message>", word by word. */
export function startEchoModel(): Promise<FakeOpenAIServer> {
  return FakeOpenAIServer.start({
    fallback: (request) => {
      const last = request.body.messages?.filter((m) => m.role === 'user').at(-1);
      return { text: `You said: ${String(last?.content)}` };
    },
  });
}

/** The test langgraph.json's folder (its graphs: agent, approval, echo, steps…). */
export const GRAPHS_DIR = path.join(__dirname, 'langgraph');

/** Two tenants' SDK clients of one server: `alice` and `bob`, each scoped to its own `user`. */
export interface TenantClients {
  alice: Client;
  bob: Client;
}

/**
 * The built server with the test langgraph.json and scoping by `user` (one API key per tenant),
 * plus `env`; the clients never retry, so a 5xx fails the test instead of hiding in the SDK's
 * retry loop.
 */
export async function startLangGraphServer(
  keys: { alice: string; bob: string },
  env: Record<string, string>,
): Promise<{ server: ServerProcess } & TenantClients> {
  const server = await startServerProcess({
    ...env,
    COGNITION_LANGGRAPH_CONFIG: path.join(GRAPHS_DIR, 'langgraph.json'),
    COGNITION_SCOPING_ENABLED: 'true',
    COGNITION_SCOPE_KEYS: 'user',
    COGNITION_API_KEYS: `${keys.alice}:user=alice,${keys.bob}:user=bob`,
  });
  const client = (apiKey: string) =>
    new Client({ apiUrl: server.url, apiKey, callerOptions: { maxRetries: 0 } });
  return { server, alice: client(keys.alice), bob: client(keys.bob) };
}

/** The server of a spec (`langGraphServerForSpec`), filled in by the time its tests run. */
export interface LangGraphSpecServer extends TenantClients {
  server: ServerProcess;
  /** The server's workspace root (`COGNITION_WORKSPACE_ROOT`), a temp directory of the spec's. */
  workspace: string;
  /** Our agents' model: the echo model (`startEchoModel`), with the `echoModel` option only. */
  readonly model: FakeOpenAIServer;
  /**
   * Stops the server with `signal` (default SIGTERM; SIGKILL for a crash) and starts it again
   * on the same database and workspace: `server`, `alice` and `bob` are then the new process's
   * (it listens on another port). `whileDown` runs once the old process has exited.
   */
  restart(options?: {
    signal?: NodeJS.Signals;
    whileDown?: () => void | Promise<void>;
  }): Promise<void>;
}

/** What a spec's server has besides the test langgraph.json and the two tenants. */
export interface LangGraphSpecOptions {
  /** Our agents answer through the echo model (`startEchoModel`), started before the server. */
  echoModel?: boolean;
  /** More of the server's environment. */
  env?: Record<string, string>;
  /** Fills the workspace (agent files…) before the server first starts. */
  prepare?: (workspace: string) => void;
}

/**
 * The hooks of a spec that drives one such server on a fresh database of its own: started before
 * its tests, stopped with its database, workspace (and echo model) dropped after them. The
 * answer is filled in by the time the tests run.
 */
export function langGraphServerForSpec(
  keys: { alice: string; bob: string },
  createDatabase: () => Promise<ServerDatabase>,
  workspacePrefix: string,
  options: LangGraphSpecOptions = {},
): LangGraphSpecServer {
  let database: ServerDatabase | undefined;
  let workspace: { dir: string; remove(): void } | undefined;
  let model: FakeOpenAIServer | undefined;
  const start = async () => {
    if (!database || !workspace) throw new Error('the spec server is started in its beforeAll');
    Object.assign(
      current,
      await startLangGraphServer(keys, {
        ...database.env,
        ...(model ? fakeProviderEnv(model) : {}),
        ...options.env,
        COGNITION_WORKSPACE_ROOT: workspace.dir,
      }),
    );
  };
  const current = {
    get model() {
      if (!model) throw new Error('the spec server has no echo model: pass { echoModel: true }');
      return model;
    },
    async restart({ signal = 'SIGTERM', whileDown } = {}) {
      await current.server.stop(signal);
      await whileDown?.();
      await start();
    },
  } as LangGraphSpecServer;
  beforeAll(async () => {
    if (options.echoModel) model = await startEchoModel();
    database = await createDatabase();
    workspace = tempWorkspace(workspacePrefix);
    current.workspace = workspace.dir;
    options.prepare?.(workspace.dir);
    await start();
  });
  afterAll(async () => {
    await current.server?.stop();
    await database?.drop();
    workspace?.remove();
    await model?.close();
  });
  return current;
}
