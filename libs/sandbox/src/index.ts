export * from './port';
export { SandboxError } from './errors';
export type { SandboxErrorCode } from './errors';
export { DEFAULT_TIMEOUT_MS, DEFAULT_KILL_GRACE_MS } from './config';
export type { CommonSandboxConfig } from './config';
export { DEFAULT_PROTECTED_PATHS } from './paths';
export { assertSpawnable, parseCommand } from './command';

// What every backend builds on (the backends live in their own libraries and may not reach into
// this one's src/): configuration checks, the path rules, the file operations, the session
// lifecycle and the output cap. The runtime has no use for these.
export {
  positiveInteger,
  resolveCommonConfig,
  validateEnv,
  validateRunId,
  validateSessionId,
} from './config';
export type { ResolvedCommonConfig } from './config';
export { PathGuard } from './paths';
export type { FileOwner } from './workspace-files';
export { LiveSessions, SessionBackend } from './session-backend';
export { OutputCollector } from './output';
