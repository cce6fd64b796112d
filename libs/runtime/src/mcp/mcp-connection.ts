import type { McpServerConfig } from '@cognition/contracts';
import type { ExecutionBackend } from '@cognition/sandbox';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { refuseNonPublicHost } from '../net/public-address';

/** Timeout of each request to an MCP server (connecting included) without `timeout_ms`. */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

const CLIENT_INFO = { name: 'cognition', version: '1.0.0' };

/** Why a server could not be used (it did not start, refused, or did not answer). */
class McpUnavailableError extends Error {
  override readonly name = 'McpUnavailableError';
}

/**
 * The MCP SDK's client side (client, schemas, transports), loaded with the first server a run
 * connects to: a large module graph that a server without MCP servers would otherwise load at
 * every start.
 */
async function loadSdk() {
  const [client, http, types, stdio] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('./sandbox-stdio-transport'),
  ]);
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    SandboxStdioTransport: stdio.SandboxStdioTransport,
  };
}
let sdk: Awaited<ReturnType<typeof loadSdk>> | undefined;

/**
 * Whether an error means the server itself failed (it counts against its circuit breaker and the
 * connection is dropped), rather than one request being wrong (an unknown tool, bad params: the
 * server answered). Before the SDK is loaded no `McpError` can exist.
 */
export function isServerFailure(error: unknown): boolean {
  if (sdk !== undefined && error instanceof sdk.McpError) {
    const code: number = error.code;
    const { ErrorCode } = sdk;
    return code === Number(ErrorCode.ConnectionClosed) || code === Number(ErrorCode.RequestTimeout);
  }
  return true;
}

/** What a connection needs from the run that opens it. */
export interface ConnectContext {
  /** The session's sandbox (stdio servers are spawned by it). */
  backend: () => Promise<ExecutionBackend>;
  signal: AbortSignal;
}

/**
 * One connected MCP client: its tools listed once at connect (cached for the connection's
 * life), its tool calls, its close. `closed` turns true when the transport went away (the
 * process exited, the session's sandbox was terminated) or `close` was called.
 */
export class McpConnection {
  private ended = false;
  private onClosed: (() => void) | null = null;

  private constructor(
    readonly server: McpServerConfig,
    private readonly client: Client,
    readonly tools: readonly Tool[],
    private readonly transport: Transport,
  ) {}

  /**
   * Also true as soon as a stdio server's process can no longer be written to, which may be
   * before its transport reports the close (see `SandboxStdioTransport.open`): a pooled
   * connection whose process died between turns is then replaced, not reused.
   */
  get closed(): boolean {
    // A connection exists only once the SDK was loaded (`open`).
    const stdio = sdk?.SandboxStdioTransport;
    return (
      this.ended || (stdio !== undefined && this.transport instanceof stdio && !this.transport.open)
    );
  }

  /** @throws McpUnavailableError saying why the server cannot be used. */
  static async open(server: McpServerConfig, ctx: ConnectContext): Promise<McpConnection> {
    const timeout = server.timeout_ms ?? DEFAULT_MCP_TIMEOUT_MS;
    sdk ??= await loadSdk();
    const { Client: McpClient, SandboxStdioTransport } = sdk;
    const transport = await openTransport(server, ctx, sdk);
    const client: Client = new McpClient(CLIENT_INFO, { capabilities: {} });
    let connection: McpConnection | null = null;
    client.onclose = () => connection?.markClosed();
    try {
      await client.connect(transport, { signal: ctx.signal, timeout });
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
          signal: ctx.signal,
          timeout,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      connection = new McpConnection(server, client, tools, transport);
      return connection;
    } catch (error) {
      await client.close().catch(() => undefined);
      if (ctx.signal.aborted) throw error;
      // "Connection closed" says less than why: the process's exit code and stderr.
      const exited = transport instanceof SandboxStdioTransport ? transport.exitReason : null;
      throw new McpUnavailableError(exited ?? describe(error), { cause: error });
    }
  }

  /** Tells `listener` once when the connection is gone. */
  whenClosed(listener: () => void): void {
    this.onClosed = listener;
    if (this.closed) listener();
  }

  async callTool(name: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
    const result = await this.client.callTool(
      { name, arguments: (args ?? {}) as Record<string, unknown> },
      undefined,
      { signal, timeout: this.server.timeout_ms ?? DEFAULT_MCP_TIMEOUT_MS },
    );
    return result as CallToolResult;
  }

  async close(): Promise<void> {
    this.markClosed();
    await this.client.close().catch(() => undefined);
  }

  private markClosed(): void {
    if (this.ended) return;
    this.ended = true;
    const listener = this.onClosed;
    this.onClosed = null;
    listener?.();
  }
}

async function openTransport(
  server: McpServerConfig,
  ctx: ConnectContext,
  { SandboxStdioTransport, StreamableHTTPClientTransport }: NonNullable<typeof sdk>,
): Promise<Transport> {
  if ('command' in server) {
    const backend = await ctx.backend();
    let child;
    try {
      child = await backend.spawn(server.command, server.args, {
        env: server.env,
        ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
      });
    } catch (error) {
      throw new McpUnavailableError(`could not start: ${describe(error)}`, { cause: error });
    }
    return new SandboxStdioTransport(child);
  }
  const url = new URL(server.url);
  const guard = async (target: URL): Promise<void> => {
    if (server.allow_private) return;
    const refusal = await refuseNonPublicHost(target);
    if (refusal) {
      throw new McpUnavailableError(
        `${refusal.message}; set allow_private: true on the server to allow it`,
      );
    }
  };
  await guard(url);
  return new StreamableHTTPClientTransport(url, {
    requestInit: { headers: server.headers },
    // Every request is checked again, so a DNS answer that changed is still refused.
    fetch: async (input, init) => {
      await guard(new URL(input));
      return fetch(input, init);
    },
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
