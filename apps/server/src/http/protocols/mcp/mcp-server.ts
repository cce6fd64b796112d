import { toHttpError } from '@cognition/api';
import type { AgentEventEnvelope, AgentView } from '@cognition/contracts';
import { toWireMessage } from '@cognition/contracts';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ApiCaller } from '../../rest/route';
import { AnswerBuilder, exposedAgents, startTurn } from '../agent-turn';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** `resources/read` of an unknown resource (MCP specification, "Error Handling"). */
const RESOURCE_NOT_FOUND = -32002;
/** How many sessions `resources/list` names (newest first); older ones are read by URI. */
const LISTED_SESSIONS = 100;
const SESSION_URI = 'cognition://sessions/{session_id}/messages';

export const toolName = (agent: string): string => `ask_${agent}`;
export const sessionUri = (sessionId: string): string =>
  `cognition://sessions/${encodeURIComponent(sessionId)}/messages`;

const AskInput = {
  message: z.string().min(1).max(2_000_000).describe('What to ask the agent'),
  session_id: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe('Continue this session (from an earlier answer); absent: a new session'),
};

const AskOutput = {
  answer: z.string().describe("The agent's final answer"),
  status: z
    .enum(['completed', 'failed', 'input_required'])
    .describe('input_required: the run waits for a decision on a tool call (human in the loop)'),
  session_id: z.string().describe('Pass it as session_id to continue the conversation'),
  run_id: z.string(),
};

/**
 * One MCP server for one request's caller: a tool `ask_<agent>` per agent MCP offers and the
 * caller's sessions as resources. Built per request (the endpoint is stateless), so the tool
 * list follows registry changes at once and any node of a cluster can answer.
 */
export async function buildMcpServer(api: ApiCaller, version: string): Promise<McpServer> {
  const server = new McpServer(
    { name: 'cognition', version },
    {
      instructions:
        'Each ask_<agent> tool sends a message to a Cognition agent and returns its answer. ' +
        'Pass the returned session_id to continue a conversation; sessions are resources.',
    },
  );
  for (const agent of await exposedAgents(api, 'mcp')) registerAgentTool(server, api, agent);
  server.registerResource(
    'session',
    new ResourceTemplate(SESSION_URI, { list: () => listSessions(api) }),
    {
      title: 'Session messages',
      description: "A session's messages in thread order (JSON)",
      mimeType: 'application/json',
    },
    (uri, variables) => readSession(api, uri, String(variables['session_id'])),
  );
  return server;
}

function registerAgentTool(server: McpServer, api: ApiCaller, agent: AgentView): void {
  server.registerTool(
    toolName(agent.name),
    {
      title: `Ask ${agent.name}`,
      description: agent.description,
      inputSchema: AskInput,
      outputSchema: AskOutput,
      annotations: { openWorldHint: true },
    },
    async (args, extra) => {
      const turn = await startTurn(api, {
        agent: agent.name,
        message: args.message,
        sessionId: args.session_id,
        protocol: 'mcp',
        sessionField: 'session_id',
      });
      const { status, answer } = await follow(turn.events, extra);
      const result: CallToolResult = {
        content: [
          { type: 'text', text: answer },
          {
            type: 'resource_link',
            uri: sessionUri(turn.session.id),
            name: `session ${turn.session.id}`,
            description: 'The conversation; pass its id as session_id to continue it',
            mimeType: 'application/json',
          },
        ],
        structuredContent: { answer, status, session_id: turn.session.id, run_id: turn.run.id },
      };
      if (status === 'failed') result.isError = true;
      return result;
    },
  );
}

/**
 * Drains the run's events into its answer, reporting each as a progress notification when the
 * client asked for progress (`_meta.progressToken`): tokens carry their text as the message.
 */
async function follow(
  events: AsyncIterable<AgentEventEnvelope>,
  extra: Extra,
): Promise<{ status: 'completed' | 'failed' | 'input_required'; answer: string }> {
  const answer = new AnswerBuilder();
  const token = extra._meta?.progressToken;
  let progress = 0;
  for await (const envelope of events) {
    answer.add(envelope);
    const { event } = envelope;
    if (token !== undefined) {
      progress += 1;
      const message = progressMessage(envelope);
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, ...(message ? { message } : {}) },
      });
    }
    if (event.type === 'error')
      return { status: 'failed', answer: `${event.code}: ${event.message}` };
    if (event.type === 'interrupt') {
      const calls = event.tool_calls.map((call) => call.name).join(', ');
      return {
        status: 'input_required',
        answer:
          `The run paused for a decision on: ${calls}. Decide through the Cognition API ` +
          `(POST /sessions/${envelope.sessionId}/runs/${event.run_id}/resume).`,
      };
    }
  }
  return { status: 'completed', answer: answer.answer };
}

function progressMessage({ event }: AgentEventEnvelope): string | undefined {
  if (event.type === 'token') return event.content;
  if (event.type === 'tool_call') return `calling ${event.name}`;
  if (event.type === 'tool_result') return `tool finished (exit ${event.exit_code})`;
  if (event.type === 'delegation') return `delegating to ${event.target_agent}`;
  return undefined;
}

async function listSessions(api: ApiCaller) {
  const { sessions } = await api.sessions.list({ limit: LISTED_SESSIONS });
  return {
    resources: sessions.map((session) => ({
      uri: sessionUri(session.id),
      name: `session ${session.id}`,
      title: session.title ?? `Session ${session.id}`,
      description: `Agent ${session.agentName}, ${session.status}`,
      mimeType: 'application/json',
    })),
  };
}

/** A session's messages; a session outside the caller's scope is not found, as everywhere. */
async function readSession(api: ApiCaller, uri: URL, sessionId: string) {
  try {
    const session = await api.sessions.get({ id: sessionId });
    const messages = [];
    for (let offset = 0; ;) {
      const page = await api.messages.list({ sessionId, offset, limit: 500, order: 'asc' });
      messages.push(...page.messages.map(toWireMessage));
      offset += page.messages.length;
      if (!page.hasMore || page.messages.length === 0) break;
    }
    const body = {
      session: {
        id: session.id,
        agent: session.agentName,
        title: session.title,
        status: session.status,
        created_at: session.createdAt.toISOString(),
        updated_at: session.updatedAt.toISOString(),
      },
      messages,
    };
    return {
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body) }],
    };
  } catch (error) {
    const { status, body } = toHttpError(error);
    if (status === 404) {
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.href}`, { uri: uri.href });
    }
    if (status < 500) throw new McpError(ErrorCode.InvalidParams, body.detail, { uri: uri.href });
    throw error;
  }
}
