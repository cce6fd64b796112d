export { runSandboxConformance } from './conformance';
export { expectSandboxError } from './expect-sandbox-error';
export { SessionPool } from './session-pool';
export type { ConformanceSession } from './session-pool';
export { readStreamUntil } from './conformance-spawn';
