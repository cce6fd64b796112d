export { createLocalSandbox, DEFAULT_LOCAL_PATH } from './local-backend';
export type { LocalSandboxConfig } from './local-backend';
