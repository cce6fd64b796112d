export * from './port';
export { SandboxError, isSandboxError } from './errors';
export type { SandboxErrorCode } from './errors';
export { DEFAULT_TIMEOUT_MS, DEFAULT_KILL_GRACE_MS } from './config';
export type { CommonSandboxConfig } from './config';
export { DEFAULT_PROTECTED_PATHS } from './paths';
export { parseCommand } from './command';
export { createLocalSandbox, DEFAULT_LOCAL_PATH } from './local-backend';
export type { LocalSandboxConfig } from './local-backend';
export {
  createDockerSandbox,
  DOCKER_DEFAULTS,
  MANAGED_LABEL,
  SESSION_LABEL,
  parseByteSize,
} from './docker/docker-backend';
export type { DockerSandboxConfig, DockerSandboxFactory } from './docker/docker-backend';
export {
  DEFAULT_DOCKER_SOCKET,
  describeConnection,
  dockerConnectionFromEnv,
  isDockerEngineFailure,
} from './docker/connection';
export type { DockerConnection } from './docker/connection';
export { checkDockerAvailable } from './docker/check';
export type { DockerAvailability } from './docker/check';
