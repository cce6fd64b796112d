export * from './db';
export * from './migrate';
export * from './testing-db';
export type { PrismaStorageConfig } from './prisma-storage';
export { createPrismaStorage } from './prisma-storage';
export { writeProjectionInTx } from './projection';
export * from './langgraph';
