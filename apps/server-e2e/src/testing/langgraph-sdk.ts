import path from 'node:path';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { Client } from '@langchain/langgraph-sdk';
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

/**
 * The hooks of a spec that drives one such server on a fresh database of its own: started before
 * its tests, stopped with its database and workspace dropped after them. The answer is filled in
 * by the time the tests run.
 */
export function langGraphServerForSpec(
  keys: { alice: string; bob: string },
  createDatabase: () => Promise<ServerDatabase>,
  workspacePrefix: string,
): LangGraphSpecServer {
  let database: ServerDatabase | undefined;
  let workspace: { dir: string; remove(): void } | undefined;
  const start = async () => {
    if (!database || !workspace) throw new Error('the spec server is started in its beforeAll');
    Object.assign(
      current,
      await startLangGraphServer(keys, {
        ...database.env,
        COGNITION_WORKSPACE_ROOT: workspace.dir,
      }),
    );
  };
  const current = {
    async restart({ signal = 'SIGTERM', whileDown } = {}) {
      await current.server.stop(signal);
      await whileDown?.();
      await start();
    },
  } as LangGraphSpecServer;
  beforeAll(async () => {
    database = await createDatabase();
    workspace = tempWorkspace(workspacePrefix);
    current.workspace = workspace.dir;
    await start();
  });
  afterAll(async () => {
    await current.server?.stop();
    await database?.drop();
    workspace?.remove();
  });
  return current;
}
