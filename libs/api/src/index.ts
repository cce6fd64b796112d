export { appRouter } from './routers/app';
export type { AppRouter } from './routers/app';
export { createCaller } from './caller';
export { mapAsyncIterator } from './map-iterator';
export { createApiContext } from './context';
export type { ApiContext, ApiServices, ApiStorage, BreakerSnapshot, SkillCatalog } from './context';
export type { ContextViewService } from './services/context-service';
export type {
  CallbackAttemptRecord,
  RunAbortResult,
  RunResumeResult,
  RunAdmission,
  RunEventsOptions,
  RunSendInput,
  RunSendResult,
  RunScheduler,
  RunService,
  SandboxReleaser,
} from './services/run-service';
export type { SessionLifecycle, ThreadPointInput, Versioned } from './services/session-service';
export type { RegistryApi, RegistryWriteInput } from './services/registry-service';
export type { ScheduleApi, ScheduleFireWithRun } from './services/schedule-service';
export { SSE_CLIENT_RECONNECT_AFTER_MS, SSE_PING_INTERVAL_MS } from './trpc';
export { requireAdmin, resolveCaller, scopeHeaderName } from './auth';
export type {
  ApiKeyConfig,
  AuthConfig,
  Caller,
  RequestHeaders,
  ResolveCallerOptions,
} from './auth';
export { ApiError, describeError, errorCodeToStatus, toHttpError, toTRPCError } from './errors';
export type { DescribedError } from './errors';
export type { HealthReport } from './routers/health/health.handler';
export type { RunDetail } from './routers/runs/get.handler';
export type { SessionDetail } from './routers/sessions/get.handler';
export type { MessageStream } from './routers/messages/stream.handler';
export type { RouterInputs, RouterOutputs } from './types';
export * from './rate-limit';
