import { StreamResponse, Task } from '@a2a-js/sdk';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import type { PushNotificationSerializer } from '@a2a-js/sdk/server';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import type { CallbackConfig, Run } from '@cognition/contracts';
import type { CallbackRequest, CompletionPayload } from '@cognition/runtime';
import { answerArtifact, agentMessage, taskState } from './task-mapping';

/** The id of a task's one push notification config (its run's completion callback). */
export const PUSH_CONFIG_ID = 'callback';

/**
 * The header of a config's `token`. The specification leaves it unnamed; the reference SDKs
 * (`@a2a-js/sdk`'s `DefaultPushNotificationSender`, the Python SDK) send and read this one.
 */
export const TOKEN_HEADER = 'X-A2A-Notification-Token';

/** The SDK's serializers, by the protocol version a config was set through. */
const SERIALIZERS: Record<CallbackConfig['a2aVersion'], PushNotificationSerializer> = {
  '1.0': new V1PushNotificationSerializer(),
  '0.3': new V03PushNotificationSerializer(),
};

/** The version a request came in as (the SDK's `requestedVersion`: '0.3' without the header). */
export function wireVersion(requested: string): CallbackConfig['a2aVersion'] {
  return requested === '1.0' ? '1.0' : '0.3';
}

/** What of a client's config we keep: its token and authentication, and its wire version. */
export function callbackConfigOf(
  config: Pick<TaskPushNotificationConfig, 'token' | 'authentication'>,
  version: CallbackConfig['a2aVersion'],
): CallbackConfig {
  const { scheme = '', credentials = '' } = config.authentication ?? {};
  return {
    a2aVersion: version,
    token: config.token,
    authentication: scheme !== '' ? { scheme, credentials } : null,
  };
}

/** A task's push notification config as A2A reads it back: the URL, token and authentication set. */
export function pushConfig(run: Run, tenant: string): TaskPushNotificationConfig {
  const config = run.callbackConfig;
  return {
    tenant,
    id: PUSH_CONFIG_ID,
    taskId: run.id,
    url: run.callbackUrl ?? '',
    token: config?.token ?? '',
    authentication: config?.authentication ?? undefined,
  };
}

/**
 * A run's end as an A2A push notification, as the SDK's own sender makes it: for a config set
 * over v1.0 the body is a `StreamResponse` holding the task (`{"task": …}`, content type
 * `application/a2a+json`), over v0.3 the task itself (`kind: "task"`, `application/json`). The
 * task: id, context, final state (with the error as status message), the answer as artifact.
 * The token goes in `X-A2A-Notification-Token`, the authentication in `Authorization`.
 */
export function a2aPushNotification(
  payload: CompletionPayload,
  config: CallbackConfig,
): CallbackRequest {
  const json = taskOf(payload);
  const { body, contentType } = SERIALIZERS[config.a2aVersion].serialize(
    StreamResponse.fromJSON({ task: json }),
    Task.fromJSON(json),
  );
  const headers: Record<string, string> = { 'content-type': contentType };
  if (config.token !== '') headers[TOKEN_HEADER] = config.token;
  if (config.authentication) {
    const { scheme, credentials } = config.authentication;
    headers['authorization'] = `${scheme} ${credentials}`;
  }
  return { body, headers };
}

function taskOf(payload: CompletionPayload) {
  const state = taskState(payload.status as Run['status']);
  const ids = { id: payload.run_id, sessionId: payload.session_id };
  return {
    id: payload.run_id,
    contextId: payload.session_id,
    status: {
      state,
      timestamp: payload.completed_at,
      ...(payload.error
        ? {
            message: agentMessage(
              ids,
              `${payload.error.code}: ${payload.error.message}`,
              `${payload.run_id}:status`,
            ),
          }
        : {}),
    },
    artifacts: state === 'TASK_STATE_COMPLETED' ? [answerArtifact(payload.output)] : [],
    history: [],
    metadata: {},
  };
}
