export * from './errors';
export * from './logger';
export { newRunId, eventId, runIdOfEventId, seqOfEventId, EVENT_SEQ_WIDTH } from './ids';
export * from './events/event-log';
export { ListenerSet } from './events/listener-set';
export * from './events/storage-event-log';
export * from './events/sse';
export * from './agents/agent';
export * from './agents/load-agents';
export * from './agents/registry';
export * from './providers/config';
export * from './providers/registry';
export * from './providers/pricing';
export type { ParsedPrices } from './providers/prices-file';
export { parsePricesFile, PricesFileSchema, PRICES_FILE_ENV } from './providers/prices-file';
export * from './providers/chat-model';
export * from './providers/embeddings';
export { UsageMeter, estimateTokens } from './providers/usage';
export * from './tools/names';
export type {
  JsonSchema,
  JsonSchemaTool,
  RuntimeTool,
  ToolContext,
  ToolResult,
  ZodTool,
} from './tools/types';
export { checkToolArgs } from './tools/types';
export { ToolCatalog, toToolDefinition } from './tools/catalog';
export type { ToolCatalogOptions, ToolDefinition } from './tools/catalog';
export type { WebFetchOptions } from './tools/web-fetch';
export { DEFAULT_MCP_IDLE_MS } from './mcp/mcp-manager';
export type { GlobalMcpServer, McpOptions } from './mcp/mcp-manager';
export { DEFAULT_MCP_TIMEOUT_MS } from './mcp/mcp-connection';
export { parseMcpServersFile } from './mcp/servers-file';
export type { WebSearchOptions, WebSearchProvider } from './tools/web-search';
export { WEB_SEARCH_PROVIDERS } from './tools/web-search';
export * from './callbacks/callback-dispatcher';
export { RunManager } from './runs/run-manager';
export * from './runs/run-manager-options';
export type { GraphSendInput, SendInput, SendResult } from './runs/admission/send-input';
export type { EventsOptions } from './runs/streams/run-events';
export type { ResumedRun } from './runs/paused-runs';
export type { ClusterOptions } from './runs/coordination/run-leases';
export type { RecoveryMode, RecoveryReport } from './runs/run-recovery';
export type { SessionStatusWriter } from './runs/run-finisher';
export type { RunQueue, RunControlChannel } from './runs/coordination/ports';
export type { CancelReason } from './runs/run-context';
export { RunSlots } from './runs/coordination/run-slots';
export { InProcessRunControl } from './runs/coordination/in-process-run-control';
// The graph a run executes and its steps, for callers that run it outside a RunManager (the
// benchmark floor: the same graph with an in-memory checkpointer).
export { AgentTurn } from './runs/execution/agent-turn';
export type { AgentTurnOptions, BoundChatModel } from './runs/execution/agent-turn';
export { createAgentGraph } from './graph/agent-graph';
export type { AgentGraphSteps } from './graph/agent-graph';
// Context management of long threads: the context-window view and the settings' defaults.
export { ContextInspector } from './context/context-view';
export { SUMMARIZER_PROMPT } from './context/summarizer';
export type { ContextInspectorOptions } from './context/context-view';
export { DEFAULT_CONTEXT_WINDOWS, FALLBACK_CONTEXT_WINDOW } from './providers/context-windows';
// Telemetry: the run observer (metrics) and the baggage keys of the runtime's spans.
export type { ModelCallRecord, RunEndOutcome, RunObserver } from './telemetry/observer';
export { NOOP_RUN_OBSERVER } from './telemetry/observer';
export { BAGGAGE_RUN_ID, BAGGAGE_SESSION_ID } from './telemetry/spans';
export type { CallUsage } from './providers/usage';
// The session model: the execute pipeline, its hooks and events, the actions and time travel.
export { SessionService } from './sessions/session-service';
export type {
  SessionRunControl,
  SessionServiceOptions,
  ThreadPoint,
} from './sessions/session-service';
export type { SessionEvent, SessionEventListener } from './sessions/session-events';
export type {
  SessionHook,
  SessionHookContext,
  SessionHookPoint,
} from './sessions/session-pipeline';
// Workspace memory files and skills.
export { SkillLibrary, SKILLS_DIR } from './skills/skill-library';
export type { LoadedSkill, SkillLibraryOptions } from './skills/skill-library';
export { parseSkillFile, SKILL_FILE } from './skills/skill-file';
export { MEMORY_FILES, MEMORY_FILES_MAX_CHARS } from './workspace/memory-files';
export * from './registry/config-registry';
export * from './registry/registry-service';
export * from './secrets/secret-cipher';
export * from './registry/registry-secrets';
export { UserGraphs, langGraphConfigPath, loadUserGraphs } from './user-graphs/user-graphs';
export { graphOnStorage } from './runs/execution/graph-run';
export type { CompiledUserGraph, UserGraph } from './user-graphs/user-graphs';
export { parseLangGraphConfig } from './user-graphs/langgraph-config';
export type { GraphSpec, LangGraphConfig, StoreIndexSpec } from './user-graphs/langgraph-config';
export { parseCron, checkTimeZone } from './schedules/cron';
export type { CronTimes } from './schedules/cron';
export { nextOccurrence, SYSTEM_CLOCK } from './schedules/schedule-times';
export type { Clock } from './schedules/schedule-times';
export { ScheduleRunner, firingSessionId } from './schedules/schedule-runner';
export type { ScheduleRunnerOptions } from './schedules/schedule-runner';
export { ScheduleService } from './schedules/schedule-service';
export type { ScheduleFireView, ScheduleServiceOptions } from './schedules/schedule-service';
export { NOOP_SCHEDULE_OBSERVER } from './schedules/schedule-observer';
export type { ScheduleObserver } from './schedules/schedule-observer';
export { createScheduling } from './schedules/scheduling';
export type { SchedulingOptions } from './schedules/scheduling';
