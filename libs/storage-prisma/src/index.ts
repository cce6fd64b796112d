export * from './db';
export * from './migrate';
export * from './testing-db';
export type { PrismaStorageConfig } from './prisma-storage';
export { createPrismaStorage } from './prisma-storage';
export type { ProjectionGate, ProjectionRequest } from './projection';
export {
  ALWAYS,
  messageProjectionHook,
  projectOnPostgres,
  projectOnSqlite,
  writeProjection,
} from './projection';
export * from './langgraph';
