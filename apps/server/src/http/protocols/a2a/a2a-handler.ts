import { AgentCard, StreamResponse, Task } from '@a2a-js/sdk';
import type {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  Message,
  SendMessageRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ExtendedAgentCardNotConfiguredError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext, User } from '@a2a-js/sdk/server';
import type { ApiServices } from '@cognition/api';
import { toHttpError } from '@cognition/api';
import type {
  AgentEventEnvelope,
  HitlDecision,
  Message as StoredMessage,
  Run,
} from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import type { ApiCaller } from '../../rest/route';
import { startTurn, untracked } from '../agent-turn';
import { PUSH_CONFIG_ID, callbackConfigOf, pushConfig, wireVersion } from './push-notification';
import type { TaskView } from './task-mapping';
import {
  answerFromMessages,
  isTerminalState,
  pendingQuestion,
  streamResponses,
  taskJson,
  taskState,
} from './task-mapping';

/** The caller of one A2A request and the agent its URL names (set before the SDK runs). */
export class CallerUser implements User {
  constructor(
    readonly api: ApiCaller,
    readonly agent: string,
    readonly userName: string,
    readonly scope: Scope,
  ) {}
  get isAuthenticated(): boolean {
    return true;
  }
}

function userOf(context: ServerCallContext): CallerUser {
  const user = context.user;
  if (!(user instanceof CallerUser)) throw new Error('A2A request without a resolved caller');
  return user;
}

/**
 * Our errors as A2A's: not found (or outside the caller's scope) is `TaskNotFoundError`, any
 * other refusal of the caller's request invalid params naming the field; the rest stays an
 * internal error.
 */
function translated(error: unknown): unknown {
  if (error instanceof Error && 'envelopeCode' in error) return error;
  const { status, body } = toHttpError(error);
  if (status === 404) return new TaskNotFoundError(body.detail);
  if (status < 500) {
    const fields = body.errors?.map((e) => `${e.path}: ${e.message}`).join('; ');
    return new RequestMalformedError(fields ? `${body.detail} (${fields})` : body.detail);
  }
  return error;
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translated(error);
  }
}

/** The text of a message's text parts; other parts are refused, naming the field. */
function textOf(message: Message | undefined): string {
  if (!message) throw new RequestMalformedError('message: required');
  const texts: string[] = [];
  message.parts.forEach((part, index) => {
    if (part.content?.$case !== 'text') {
      throw new RequestMalformedError(`message.parts.${index}: only text parts are accepted`);
    }
    texts.push(part.content.value);
  });
  const text = texts.join('\n');
  if (text.trim() === '') throw new RequestMalformedError('message.parts: no text');
  return text;
}

/** The decisions an answer to an input-required task gives: approve or reject every call. */
function decisionsOf(run: Run, text: string): HitlDecision[] {
  const answer = text.trim().toLowerCase();
  if (answer !== 'approve' && answer !== 'reject') {
    throw new RequestMalformedError(
      'message.parts: the task waits for a decision; answer "approve" or "reject"',
    );
  }
  return (run.pendingAction?.tool_calls ?? []).map((call) =>
    answer === 'approve'
      ? { tool_call_id: call.id, type: 'approve' as const }
      : { tool_call_id: call.id, type: 'reject' as const, message: 'Rejected over A2A' },
  );
}

/**
 * The A2A request handler over our API (what the SDK's JSON-RPC transport calls, for v1.0 and
 * v0.3 method names alike): a message starts a run in a new session or in its `contextId`, or
 * answers an input-required task; tasks are read, cancelled and followed through the same
 * procedures as REST, in the caller's scope.
 */
export class CognitionA2AHandler implements A2ARequestHandler {
  constructor(private readonly services: ApiServices) {}

  /** The versions and binding served (the SDK checks requests against it); cards: card.ts. */
  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(
      AgentCard.fromJSON({
        name: 'cognition',
        description: 'Cognition agents',
        version: this.services.version,
        supportedInterfaces: [
          { url: '/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url: '/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        ],
      }),
    );
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(new ExtendedAgentCardNotConfiguredError());
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    return guarded(async () => {
      const { api } = userOf(context);
      const { run, events } = await this.start(params, context);
      if (params.configuration?.returnImmediately) {
        await events.return();
        return Task.fromJSON(taskJson(await this.view(api, run.id)));
      }
      // Blocking: the run's events until it ends or pauses, then the task as stored.
      for await (const _envelope of events) continue;
      return Task.fromJSON(taskJson(await this.view(api, run.id)));
    });
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { run, events } = await guarded(() => this.start(params, context));
    yield StreamResponse.fromJSON({
      task: taskJson({ run, state: 'TASK_STATE_SUBMITTED', answer: null, statusText: null }),
    });
    yield* this.follow(run, events);
  }

  getTask(params: { id: string }, context: ServerCallContext): Promise<Task> {
    return guarded(async () =>
      Task.fromJSON(taskJson(await this.view(userOf(context).api, params.id))),
    );
  }

  cancelTask(params: { id: string }, context: ServerCallContext): Promise<Task> {
    return guarded(async () => {
      const { api } = userOf(context);
      const view = await this.view(api, params.id);
      if (isTerminalState(view.state)) {
        throw new TaskNotCancelableError(`Task ${params.id} is already ${view.state}`);
      }
      await api.runs.abort({ sessionId: view.run.sessionId });
      return Task.fromJSON(taskJson(await this.view(api, params.id)));
    });
  }

  /**
   * The task as it is now, then (while it runs) its events from its start: after a restart the
   * run resumes from its checkpoint on some node and its stream goes on from the database.
   */
  async *resubscribe(
    params: { id: string },
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { api } = userOf(context);
    const view = await guarded(() => this.view(api, params.id));
    yield StreamResponse.fromJSON({ task: taskJson(view) });
    if (isTerminalState(view.state) || view.state === 'TASK_STATE_INPUT_REQUIRED') return;
    const events = await guarded(async () =>
      untracked(await api.runs.events({ sessionId: view.run.sessionId, runId: view.run.id })),
    );
    yield* this.follow(view.run, events);
  }

  /**
   * Push notifications are the run's completion callback (signed, retried, stored: they
   * survive restarts), sent as an A2A task with the config's token and authentication
   * (push-notification.ts): one config per task, its URL the run's `callbackUrl`, the rest its
   * `callbackConfig`; setting another replaces it.
   */
  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return guarded(async () => {
      const { scope } = userOf(context);
      const view = await this.view(userOf(context).api, params.taskId);
      if (params.url === '') throw new RequestMalformedError('url: required');
      const run = await this.services.runs.scheduler.setCallback(
        view.run.sessionId,
        view.run.id,
        params.url,
        scope,
        callbackConfigOf(params, wireVersion(context.requestedVersion)),
      );
      return pushConfig(run, params.tenant);
    });
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return guarded(async () => {
      const view = await this.view(userOf(context).api, params.taskId);
      if (view.run.callbackUrl === null || (params.id !== '' && params.id !== PUSH_CONFIG_ID)) {
        throw new TaskNotFoundError(
          `Task ${params.taskId} has no push notification config ${params.id}`,
        );
      }
      return pushConfig(view.run, params.tenant);
    });
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return guarded(async () => {
      const view = await this.view(userOf(context).api, params.taskId);
      const configs = view.run.callbackUrl === null ? [] : [pushConfig(view.run, params.tenant)];
      return { configs, nextPageToken: '' };
    });
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return guarded(async () => {
      const { api, scope } = userOf(context);
      const view = await this.view(api, params.taskId);
      if (view.run.callbackUrl === null || params.id !== PUSH_CONFIG_ID) {
        throw new TaskNotFoundError(
          `Task ${params.taskId} has no push notification config ${params.id}`,
        );
      }
      await this.services.runs.scheduler.setCallback(view.run.sessionId, view.run.id, null, scope);
    });
  }
  listTasks(): Promise<never> {
    return Promise.reject(new UnsupportedOperationError('tasks/list is not offered'));
  }

  /** A new turn, or the answer to an input-required task (`message.taskId`). */
  private async start(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): Promise<{ run: Run; events: AsyncGenerator<AgentEventEnvelope, void, undefined> }> {
    const { api, agent } = userOf(context);
    const text = textOf(params.message);
    const taskId = params.message?.taskId ?? '';
    if (taskId !== '') {
      const view = await this.view(api, taskId);
      if (view.state !== 'TASK_STATE_INPUT_REQUIRED') {
        throw new UnsupportedOperationError(
          `Task ${taskId} is ${view.state}: only an input-required task takes a message`,
        );
      }
      const { run, lastEventId } = await api.runs.resume({
        sessionId: view.run.sessionId,
        runId: view.run.id,
        decisions: decisionsOf(view.run, text),
      });
      const source = await api.runs.events({
        sessionId: run.sessionId,
        runId: run.id,
        ...(lastEventId !== null ? { lastEventId } : {}),
      });
      return { run, events: untracked(source) };
    }
    const contextId = params.message?.contextId ?? '';
    const push = params.configuration?.taskPushNotificationConfig;
    const turn = await startTurn(api, {
      agent,
      message: text,
      sessionId: contextId === '' ? undefined : contextId,
      protocol: 'a2a',
      sessionField: 'message.contextId',
      ...(push && push.url !== ''
        ? {
            callbackUrl: push.url,
            callbackConfig: callbackConfigOf(push, wireVersion(context.requestedVersion)),
          }
        : {}),
    });
    return { run: turn.run, events: turn.events };
  }

  private async *follow(
    run: Run,
    events: AsyncGenerator<AgentEventEnvelope, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    for await (const envelope of events) {
      for (const response of streamResponses(run, envelope))
        yield StreamResponse.fromJSON(response);
    }
  }

  /** The task `id` in the caller's scope (a run of another tenant is not found). */
  private async view(api: ApiCaller, id: string): Promise<TaskView> {
    const stored = await this.services.storage.runs.get(id);
    if (!stored) throw new TaskNotFoundError(`Task not found: ${id}`);
    const { callbackAttempts: _attempts, ...run } = await api.runs.get({
      sessionId: stored.sessionId,
      runId: id,
    });
    const state = taskState(run.status);
    let answer: string | null = null;
    let statusText: string | null = null;
    if (state === 'TASK_STATE_COMPLETED')
      answer = answerFromMessages(run, await allMessages(api, run.sessionId));
    if (state === 'TASK_STATE_INPUT_REQUIRED') statusText = pendingQuestion(run);
    if (state === 'TASK_STATE_FAILED' && run.error)
      statusText = `${run.error.code}: ${run.error.message}`;
    return { run, state, answer, statusText };
  }
}

async function allMessages(api: ApiCaller, sessionId: string): Promise<StoredMessage[]> {
  const messages: StoredMessage[] = [];
  for (let offset = 0; ;) {
    const page = await api.messages.list({ sessionId, offset, limit: 500, order: 'asc' });
    messages.push(...page.messages);
    offset += page.messages.length;
    if (!page.hasMore || page.messages.length === 0) return messages;
  }
}
