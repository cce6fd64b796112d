import type {
  CircuitBreaker,
  CircuitBreakerOptions,
  CircuitBreakerRegistry,
} from '@cognition/circuit-breaker';
import { isCircuitOpenError } from '@cognition/circuit-breaker';
import type { McpServerConfig } from '@cognition/contracts';
import type { AgentDefinition } from '../agents/agent';
import { errorMessage } from '../errors';
import type { Logger } from '../logger';
import type { JsonSchemaTool, ToolResult } from '../tools/types';
import type { ConnectContext } from './mcp-connection';
import { McpConnection, isServerFailure } from './mcp-connection';
import { formatToolResult, isOfferableName, mcpToolName, toRuntimeTool } from './mcp-tools';

/** A server of `COGNITION_MCP_SERVERS_FILE`: offered to `agents` (null: every agent). */
export interface GlobalMcpServer {
  server: McpServerConfig;
  agents: readonly string[] | null;
}

export interface McpOptions {
  /** The globally configured servers (`COGNITION_MCP_SERVERS_FILE`). */
  servers?: readonly GlobalMcpServer[];
  /** A session's connection unused this long is closed (its stdio process stopped). Default 5 min. */
  idleMs?: number;
  /**
   * Options of the `mcp:<server>` breakers. Default: open on the first failure (a server that
   * does not start usually keeps not starting; each retry would cost every run its timeout).
   */
  breakerOptions?: Omit<CircuitBreakerOptions, 'isFailure'>;
}

export const DEFAULT_MCP_IDLE_MS = 300_000;

/** A run's MCP tools, and why some servers' tools are missing. */
export interface McpRunTools {
  tools: JsonSchemaTool[];
  /** For the system prompt: the servers (and tools) not offered in this run and why; '' if none. */
  note: string;
  /** The run is done with its connections (they stay pooled until idle). */
  release(): void;
}

interface PoolEntry {
  /**
   * Session, server name and the server's whole configuration: a changed definition gets a new
   * connection (the old one closes when idle), and two agents' same-named servers do not meet.
   */
  key: string;
  connection: Promise<McpConnection>;
  users: number;
  idleTimer: NodeJS.Timeout | null;
}

type Acquired = { entry: PoolEntry; connection: McpConnection } | { problem: string };

/**
 * The MCP connections of this process, pooled per (session, server): a session's runs reuse
 * their connections (a stdio server keeps its process and state between turns, the tool list is
 * listed once per connection), each closed after `idleMs` without use, when the session is
 * forgotten, or at shutdown. A server that fails to start or answer counts against its breaker
 * `mcp:<server>`; while that is open the server is skipped without trying, and the run goes on
 * without its tools, the model told why (`note`).
 */
export class McpManager {
  private readonly pool = new Map<string, PoolEntry>();
  private readonly idleMs: number;

  constructor(
    private readonly options: McpOptions,
    private readonly breakers: CircuitBreakerRegistry,
    private readonly logger: Logger,
  ) {
    this.idleMs = options.idleMs ?? DEFAULT_MCP_IDLE_MS;
  }

  /** The agent's servers, then the global ones it gets (an agent's server wins a name clash). */
  serversFor(agent: AgentDefinition): McpServerConfig[] {
    const own = new Set(agent.mcpServers.map((server) => server.name));
    const global = (this.options.servers ?? [])
      .filter((entry) => entry.agents === null || entry.agents.includes(agent.name))
      .map((entry) => entry.server)
      .filter((server) => !own.has(server.name));
    return [...agent.mcpServers, ...global];
  }

  async forRun(
    sessionId: string,
    agent: AgentDefinition,
    ctx: ConnectContext,
  ): Promise<McpRunTools> {
    const servers = this.serversFor(agent);
    if (servers.length === 0) return { tools: [], note: '', release: () => undefined };
    const acquired = await Promise.all(
      servers.map((server) => this.acquire(sessionId, server, ctx)),
    );
    const tools: JsonSchemaTool[] = [];
    const problems: string[] = [];
    const held: PoolEntry[] = [];
    acquired.forEach((result, index) => {
      const server = servers[index] as McpServerConfig;
      if ('problem' in result) {
        problems.push(`- ${server.name}: ${result.problem}`);
        return;
      }
      held.push(result.entry);
      const { entry, connection } = result;
      for (const tool of connection.tools) {
        const name = mcpToolName(server.name, tool.name);
        if (!isOfferableName(name)) {
          problems.push(
            `- ${server.name}: tool "${tool.name}" not offered (${name} is not a valid tool name for model APIs)`,
          );
          continue;
        }
        tools.push(
          toRuntimeTool(server.name, tool, (toolName, args, signal) =>
            this.call(entry, server, connection, toolName, args, signal),
          ),
        );
      }
    });
    const note =
      problems.length === 0
        ? ''
        : `\n\nSome MCP tools are not available in this turn; do not try to call them:\n${problems.join('\n')}`;
    let released = false;
    return {
      tools,
      note,
      release: () => {
        if (released) return;
        released = true;
        for (const entry of held) this.releaseEntry(entry);
      },
    };
  }

  /** Closes the session's connections (the session is deleted or its sandbox released). */
  async closeSession(sessionId: string): Promise<void> {
    const prefix = `${sessionId}\0`;
    await Promise.all(
      [...this.pool.keys()].filter((key) => key.startsWith(prefix)).map((key) => this.drop(key)),
    );
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.pool.keys()].map((key) => this.drop(key)));
  }

  private breaker(server: string): CircuitBreaker {
    return this.breakers.get(`mcp:${server}`, {
      failureThreshold: 1,
      ...this.options.breakerOptions,
      isFailure: isServerFailure,
    });
  }

  private async acquire(
    sessionId: string,
    server: McpServerConfig,
    ctx: ConnectContext,
  ): Promise<Acquired> {
    const key = `${sessionId}\0${server.name}\0${JSON.stringify(server)}`;
    let entry = this.pool.get(key);
    const fresh = !entry;
    if (!entry) {
      const breaker = this.breaker(server.name);
      const created: PoolEntry = {
        key,
        users: 0,
        idleTimer: null,
        connection: breaker.execute(() => McpConnection.open(server, ctx), { signal: ctx.signal }),
      };
      this.pool.set(key, created);
      entry = created;
    }
    entry.users += 1;
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    entry.idleTimer = null;
    try {
      const connection = await entry.connection;
      if (connection.closed && !fresh) {
        // Went away since the last run (its close not yet seen): connect anew.
        entry.users -= 1;
        if (this.pool.get(key) === entry) this.pool.delete(key);
        return this.acquire(sessionId, server, ctx);
      }
      if (connection.closed) throw new Error('the connection closed while starting');
      const current = entry;
      connection.whenClosed(() => {
        if (this.pool.get(key) === current) this.pool.delete(key);
      });
      return { entry, connection };
    } catch (error) {
      if (this.pool.get(key) === entry) this.pool.delete(key);
      const problem = isCircuitOpenError(error)
        ? `unavailable: it failed recently and its circuit breaker mcp:${server.name} is open (retry in ${Math.ceil(error.retryAfterMs / 1000)} s)`
        : `unavailable: ${errorMessage(error)}`;
      if (!ctx.signal.aborted) {
        this.logger.warn({ server: server.name, problem }, 'MCP server unavailable');
      }
      return { problem };
    }
  }

  private releaseEntry(entry: PoolEntry): void {
    entry.users -= 1;
    if (entry.users > 0) return;
    entry.idleTimer = setTimeout(() => {
      if (this.pool.get(entry.key) === entry) void this.drop(entry.key);
    }, this.idleMs);
    entry.idleTimer.unref();
  }

  private async drop(key: string): Promise<void> {
    const entry = this.pool.get(key);
    if (!entry) return;
    this.pool.delete(key);
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    const connection = await entry.connection.catch(() => null);
    await connection?.close();
  }

  private async call(
    entry: PoolEntry,
    server: McpServerConfig,
    connection: McpConnection,
    tool: string,
    args: unknown,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    const where = `MCP server "${server.name}"`;
    if (connection.closed) {
      return {
        output: `${where} is gone (its connection closed); its tools are offered again from the next turn.`,
        exitCode: 1,
      };
    }
    try {
      const result = await this.breaker(server.name).execute(
        () => connection.callTool(tool, args, signal),
        { signal },
      );
      return formatToolResult(result);
    } catch (error) {
      if (signal.aborted) throw error;
      if (isCircuitOpenError(error)) {
        return { output: `${where} is failing; its circuit breaker is open.`, exitCode: 1 };
      }
      // A server that stopped answering is reconnected from scratch by the next run.
      if (isServerFailure(error) && this.pool.get(entry.key) === entry) await this.drop(entry.key);
      return { output: `${where} failed: ${errorMessage(error)}`, exitCode: 1 };
    }
  }
}
