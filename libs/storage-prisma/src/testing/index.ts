export * from './test-db';
export * from './private-postgres';
