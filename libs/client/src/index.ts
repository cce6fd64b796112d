export { cognitionHeaders, createCognitionClient } from './client';
export type { CognitionClient, CognitionClientOptions, EventSourceClass } from './client';
export { streamMessage } from './stream-message';
export type { SendMessageInput, SendMessageResult, StreamMessageOptions } from './stream-message';
export type {
  AppRouter,
  CallbackAttemptRecord,
  HealthReport,
  RouterInputs,
  RouterOutputs,
  RunDetail,
} from '@cognition/api';
export type {
  AgentEvent,
  AgentEventEnvelope,
  AgentEventOf,
  AgentEventType,
  ContextParts,
  ContextStrategy,
  ContextWindowView,
  ErrorBody,
  ErrorCode,
  FieldIssue,
  Message,
  MessagePage,
  Run,
  RunError,
  RunStatus,
  Session,
  SessionConfig,
  SessionPage,
  SessionSort,
  SessionStatus,
  SummaryCoverage,
  Todo,
  Usage,
  WireMessage,
} from '@cognition/contracts';
