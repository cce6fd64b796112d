export { cognitionHeaders, createCognitionClient } from './client';
export type { CognitionClient, CognitionClientOptions, EventSourceClass } from './client';
export type { AppRouter, HealthReport, RouterInputs, RouterOutputs } from '@cognition/api';
export type {
  ErrorBody,
  ErrorCode,
  FieldIssue,
  Message,
  MessagePage,
  Session,
  SessionConfig,
  SessionPage,
  SessionStatus,
} from '@cognition/contracts';
