export { runSandboxConformance, expectSandboxError, SessionPool } from './conformance';
export type { ConformanceSession } from './conformance';
