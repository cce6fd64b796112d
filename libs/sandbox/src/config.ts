import { SandboxError } from './errors';
import { DEFAULT_PROTECTED_PATHS } from './paths';

/** Default of `execute`'s timeout: 300 s (the original `COGNITION_DOCKER_TIMEOUT`). */
export const DEFAULT_TIMEOUT_MS = 300_000;
/** Default grace between SIGTERM and SIGKILL when a command is stopped. */
export const DEFAULT_KILL_GRACE_MS = 2_000;

/** Settings every backend shares. */
export interface CommonSandboxConfig {
  /**
   * Default timeout of `execute` in ms (the server maps `COGNITION_DOCKER_TIMEOUT`, in seconds,
   * to this). Default 300 000.
   */
  timeoutMs?: number;
  /** Paths relative to each session root that file operations never write, edit or delete. */
  protectedPaths?: readonly string[];
  /** Grace between SIGTERM and SIGKILL when a command times out or is aborted. Default 2000. */
  killGraceMs?: number;
}

export interface ResolvedCommonConfig {
  timeoutMs: number;
  protectedPaths: readonly string[];
  killGraceMs: number;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function resolveCommonConfig(
  config: CommonSandboxConfig,
  prefix: string,
): ResolvedCommonConfig {
  return {
    timeoutMs: positiveInteger(config.timeoutMs, `${prefix}.timeoutMs`) ?? DEFAULT_TIMEOUT_MS,
    protectedPaths: config.protectedPaths ?? DEFAULT_PROTECTED_PATHS,
    killGraceMs:
      nonNegativeInteger(config.killGraceMs, `${prefix}.killGraceMs`) ?? DEFAULT_KILL_GRACE_MS,
  };
}

/** @throws SandboxError INVALID_ARGUMENT naming the field. */
export function positiveInteger(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `${field} must be a positive integer (got ${String(value)})`,
    );
  }
  return value;
}

/** @throws SandboxError INVALID_ARGUMENT naming the field. */
export function nonNegativeInteger(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `${field} must be a non-negative integer (got ${String(value)})`,
    );
  }
  return value;
}

/** @throws SandboxError INVALID_ARGUMENT for a bad variable name or a non-string value. */
export function validateEnv(env: Record<string, string> | undefined): Record<string, string> {
  if (env === undefined) return {};
  if (typeof env !== 'object' || env === null) {
    throw new SandboxError('INVALID_ARGUMENT', 'env must be an object of strings');
  }
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name)) {
      throw new SandboxError('INVALID_ARGUMENT', `env: "${name}" is not a valid variable name`);
    }
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new SandboxError(
        'INVALID_ARGUMENT',
        `env.${name} must be a string without NUL characters`,
      );
    }
  }
  return { ...env };
}

/** @throws SandboxError INVALID_ARGUMENT for an empty or unusual session id. */
export function validateSessionId(sessionId: string): string {
  // Container names allow [a-zA-Z0-9][a-zA-Z0-9_.-]; ids are embedded in names and labels.
  if (typeof sessionId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(sessionId)) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `sessionId "${String(sessionId)}" must be 1-128 characters of letters, digits, '_', '.', '-'`,
    );
  }
  return sessionId;
}

/**
 * @throws SandboxError INVALID_ARGUMENT for an unusual run id (ids name record files and
 *   directories, so nothing path-like gets through).
 */
export function validateRunId(runId: string | undefined): string | undefined {
  if (runId === undefined) return undefined;
  if (typeof runId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(runId)) {
    throw new SandboxError(
      'INVALID_ARGUMENT',
      `runId "${String(runId)}" must be 1-128 characters of letters, digits, '_', '.', '-'`,
    );
  }
  return runId;
}
