import type { Message } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import type { ApiServices, AuthConfig } from '@cognition/api';
import { ApiError, toHttpError } from '@cognition/api';
import type { AgentEventEnvelope, FieldIssue } from '@cognition/contracts';
import express, { Router } from 'express';
import type { Request, Response } from 'express';
import { requestLog } from '../../request-log';
import { sendError } from '../../rest/errors';
import type { ApiCaller } from '../../rest/route';
import { exposedAgents, startTurn, untracked } from '../agent-turn';
import { protocolCaller } from '../json-rpc';
import { AgUiTranslator } from './ag-ui-events';
import type { RunAgentInput } from './run-input';
import { RunAgentInputSchema, clientResults, clientToolsOf, textOf } from './run-input';

export const AG_UI_PREFIX = '/ag-ui';
/** The session metadata that names the AG-UI thread a session carries. */
export const THREAD_METADATA_KEY = 'ag_ui_thread_id';
/** The message metadata that names the AG-UI run (`runId`) a message started. */
export const RUN_METADATA_KEY = 'ag_ui_run_id';

export interface AgUiMountOptions {
  auth: AuthConfig;
  services: ApiServices;
  maxBodyBytes: number;
}

/**
 * AG-UI: `POST /ag-ui/<agent>` takes a `RunAgentInput` and streams a run as AG-UI events (SSE).
 * The thread is a session of the agent (found by its `ag_ui_thread_id` metadata, created on the
 * first run). What the input does depends on the thread (docs/protocols.md):
 * - the thread's run waits on frontend tools and the input's `tool` messages answer them: the
 *   run resumes with those results;
 * - the input's `runId` is the one the thread's latest run was started with: that run is
 *   streamed again from its first event and followed (re-attaching after a drop or a restart);
 * - else its last user message is sent to the session, its `tools` offered as client tools.
 */
export function agUiRouter(options: AgUiMountOptions): Router {
  const { auth, services, maxBodyBytes } = options;
  const router = Router();
  router.post(
    `${AG_UI_PREFIX}/:agent`,
    express.json({ limit: maxBodyBytes, type: () => true }),
    async (req, res) => {
      try {
        const { api } = protocolCaller(req, res, auth, services);
        const name = String(req.params['agent']);
        const agent = (await exposedAgents(api, 'ag_ui')).find((a) => a.name === name);
        if (!agent) {
          sendError(res, 404, { detail: `Agent not found: ${name}`, code: 'NOT_FOUND' });
          return;
        }
        const parsed = RunAgentInputSchema.safeParse(req.body);
        if (!parsed.success) {
          invalid(
            res,
            parsed.error.issues.map((i) => ({
              path: `body.${i.path.join('.')}`,
              message: i.message,
            })),
          );
          return;
        }
        const input = parsed.data;
        const client = clientToolsOf(input, agent.tools);
        if (client.issues.length > 0) {
          invalid(res, client.issues);
          return;
        }
        const { sessions } = await api.sessions.list({
          limit: 1,
          metadata: { [THREAD_METADATA_KEY]: input.threadId },
        });
        const session = sessions[0];
        const attached = session ? await attach(api, session.id, input) : null;
        if (attached) {
          await streamRun(req, res, input, attached.events, attached.answered);
          return;
        }
        if (input.messages.at(-1)?.role === 'tool') {
          // Tool results for a run that no longer waits (resumed already, or aborted): sending
          // the last user message again would answer it twice.
          throw new ApiError('CONFLICT', 'No run of this thread waits for these tool results', {
            issues: [{ path: 'body.messages', message: 'no pending tool call to answer' }],
          });
        }
        const last = input.messages.findLast((m) => m.role === 'user');
        const message = textOf(last?.content);
        if (message.trim() === '') {
          invalid(res, [{ path: 'body.messages', message: 'no user message with text' }]);
          return;
        }
        const turn = await startTurn(api, {
          agent: agent.name,
          message,
          sessionId: session?.id,
          protocol: 'ag_ui',
          sessionField: 'body.threadId',
          metadata: { [THREAD_METADATA_KEY]: input.threadId },
          messageMetadata: { [RUN_METADATA_KEY]: input.runId },
          clientTools: client.tools,
        });
        await streamRun(req, res, input, turn.events, new Set());
      } catch (error) {
        const { status, body } = toHttpError(error);
        if (status >= 500) requestLog(req).error({ err: error }, 'AG-UI request failed');
        sendError(res, status, body);
      }
    },
  );
  return router;
}

function invalid(res: Response, errors: FieldIssue[]): void {
  sendError(res, 422, {
    detail: `Invalid RunAgentInput: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    code: 'VALIDATION_ERROR',
    errors,
  });
}

/**
 * What an input does to the thread's latest run, if anything: resume it with the client's tool
 * results (`answered`: those calls' ids), or re-attach to it (its `runId` again). null: a new
 * turn. A run waiting on frontend tools whose results the input lacks is a 409.
 */
async function attach(
  api: ApiCaller,
  sessionId: string,
  input: RunAgentInput,
): Promise<{ events: AsyncGenerator<AgentEventEnvelope>; answered: Set<string> } | null> {
  const [latest] = (await api.runs.list({ sessionId })).runs;
  if (!latest) return null;
  if (latest.status === 'requires_action') {
    const decisions = clientResults(latest, input);
    if (decisions) {
      const { run, lastEventId } = await api.runs.resume({
        sessionId,
        runId: latest.id,
        decisions,
      });
      const events = await api.runs.events({
        sessionId,
        runId: run.id,
        ...(lastEventId !== null ? { lastEventId } : {}),
      });
      return { events: untracked(events), answered: new Set(decisions.map((d) => d.tool_call_id)) };
    }
  }
  const started = latest.inputMessageId
    ? await api.messages.get({ sessionId, messageId: latest.inputMessageId })
    : null;
  if (started?.metadata[RUN_METADATA_KEY] === input.runId) {
    const events = await api.runs.events({ sessionId, runId: latest.id });
    return { events: untracked(events), answered: new Set() };
  }
  if (latest.status === 'requires_action') {
    const calls = latest.pendingAction?.tool_calls ?? [];
    const waiting = calls.map((c) => `${c.name} (${c.id})`).join(', ');
    throw new ApiError(
      'RUN_IN_PROGRESS',
      calls.every((c) => c.allowed.includes('respond'))
        ? `The thread's run ${latest.id} waits for the results of ${waiting}: send them as tool messages with their toolCallId`
        : `The thread's run ${latest.id} waits for a person's decision on ${waiting}: POST /sessions/${sessionId}/runs/${latest.id}/resume`,
      { issues: [{ path: 'body.messages', message: 'the pending calls need an answer first' }] },
    );
  }
  return null;
}

/** Streams `events` as AG-UI events (SSE); `answered`: tool calls whose results the client gave. */
async function streamRun(
  req: Request,
  res: Response,
  input: RunAgentInput,
  events: AsyncGenerator<AgentEventEnvelope>,
  answered: ReadonlySet<string>,
): Promise<void> {
  const encoder = new EventEncoder({ accept: req.header('accept') ?? 'text/event-stream' });
  res.status(200).setHeader('Content-Type', encoder.getContentType());
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  const translator = new AgUiTranslator(
    input.threadId,
    input.runId,
    answered,
    // Checked only for the fields we read; what the client sent, kept as it sent it.
    input.messages as unknown as Message[],
  );
  res.write(encoder.encode(translator.started()));
  for await (const envelope of events) {
    for (const event of translator.translate(envelope)) res.write(encoder.encode(event));
  }
  for (const event of translator.end()) res.write(encoder.encode(event));
  res.end();
}
