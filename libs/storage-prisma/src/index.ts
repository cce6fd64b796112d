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
export type { SqlStatement } from './analytics/usage-store';
export { costByModelStatement, statsStatement } from './analytics/usage-store';
export { searchStatement } from './analytics/search-store';
export { SEARCH_OBJECTS } from './analytics/search-objects';
