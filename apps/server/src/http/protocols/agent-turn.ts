import type { AgentView } from '@cognition/contracts';
import type {
  AgentEventEnvelope,
  CallbackConfig,
  ClientTool,
  Run,
  Session,
} from '@cognition/contracts';
import { ApiError } from '@cognition/api';
import { isTrackedEnvelope } from '@trpc/server';
import type { ApiCaller } from '../rest/route';

/** The open protocols an agent can be offered over (`expose` of its definition). */
export type Protocol = 'mcp' | 'a2a' | 'ag_ui';

/** The agents `protocol` offers: primary agents whose definition does not leave it out. */
export async function exposedAgents(api: ApiCaller, protocol: Protocol): Promise<AgentView[]> {
  const agents = await api.agents.list();
  return agents.filter((agent) => agent.mode === 'primary' && agent.expose[protocol]);
}

/** What one protocol request asks of an agent: a message, in a new session or a given one. */
export interface TurnRequest {
  agent: string;
  message: string;
  /** Continue this session (it must be the caller's and bound to `agent`); absent: a new one. */
  sessionId?: string | undefined;
  /** Where the turn came from, kept in a new session's metadata (`protocol`). */
  protocol: Protocol;
  /** The name of the request field that carried `sessionId`, for error messages. */
  sessionField: string;
  /** More metadata of a new session (besides `protocol`). */
  metadata?: Record<string, string>;
  /** Metadata of the message sent. */
  messageMetadata?: Record<string, string>;
  /** Tools the client runs, offered to the model for this turn (a call pauses the run). */
  clientTools?: ClientTool[];
  /** Where the run's completion payload goes (signed, retried, durable). */
  callbackUrl?: string;
  /** How it is sent (an A2A push notification config's). */
  callbackConfig?: CallbackConfig;
}

export interface Turn {
  session: Session;
  run: Run;
  /** The run's events from its first, ending after its terminal event or an `interrupt`. */
  events: AsyncGenerator<AgentEventEnvelope, void, undefined>;
}

/**
 * Starts a turn through the same procedures REST calls (so scoping, admission, the multitask
 * rule and rate limits apply unchanged): the session is created for `agent`, or looked up in
 * the caller's scope (another tenant's session is not found) and must belong to `agent`.
 */
export async function startTurn(api: ApiCaller, request: TurnRequest): Promise<Turn> {
  let session: Session;
  if (request.sessionId === undefined) {
    session = await api.sessions.create({
      agentName: request.agent,
      // By code point: a cut through a surrogate pair would be an unstorable title (422).
      title: Array.from(request.message).slice(0, 80).join(''),
      metadata: { ...request.metadata, protocol: request.protocol },
    });
  } else {
    session = await api.sessions.get({ id: request.sessionId });
    if (session.agentName !== request.agent) {
      throw new ApiError(
        'VALIDATION_ERROR',
        `Session ${session.id} belongs to agent "${session.agentName}", not "${request.agent}"`,
        {
          issues: [
            { path: request.sessionField, message: `a session of agent "${session.agentName}"` },
          ],
        },
      );
    }
  }
  const { run, events } = await api.messages.stream({
    sessionId: session.id,
    content: request.message,
    ...(request.messageMetadata ? { metadata: request.messageMetadata } : {}),
    ...(request.clientTools?.length ? { clientTools: request.clientTools } : {}),
    ...(request.callbackUrl ? { callbackUrl: request.callbackUrl } : {}),
    ...(request.callbackUrl && request.callbackConfig
      ? { callbackConfig: request.callbackConfig }
      : {}),
  });
  return { session, run, events };
}

/**
 * The answer of a finished run: the final assistant message as stored (`done`), else the text
 * streamed since the last `resumed` (a step cut off by a crash is void and streamed again).
 */
export class AnswerBuilder {
  private text = '';
  private final: string | null = null;

  add(envelope: AgentEventEnvelope): void {
    const { event } = envelope;
    if (event.type === 'token') this.text += event.content;
    else if (event.type === 'resumed') this.text = '';
    else if (event.type === 'done' && event.assistant_data)
      this.final = event.assistant_data.content;
  }

  get answer(): string {
    return this.final ?? this.text;
  }
}

/** `runs.events` called in-process yields `tracked(id, envelope)` tuples: the envelopes. */
export async function* untracked(
  source: AsyncIterable<unknown>,
): AsyncGenerator<AgentEventEnvelope, void, undefined> {
  for await (const item of source) {
    yield (isTrackedEnvelope(item) ? item[1] : item) as AgentEventEnvelope;
  }
}
