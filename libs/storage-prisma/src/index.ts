export * from './db/db';
export * from './db/migrate';
export { compactSqliteFile } from './db/compact';
export type { PrismaStorageConfig } from './prisma-storage';
export { createPrismaStorage } from './prisma-storage';
export type { ProjectionGate, ProjectionRequest } from './messages/projection-plan';
export { ALWAYS } from './messages/projection-plan';
export {
  messageProjectionHook,
  projectOnPostgres,
  projectOnSqlite,
  writeProjection,
} from './messages/projection';
export * from './langgraph';
export type { SqlStatement } from './analytics/usage-store';
export { costByModelStatement, statsStatement } from './analytics/usage-store';
export { searchStatement } from './analytics/search-store';
export { SEARCH_OBJECTS } from './analytics/search-objects';
