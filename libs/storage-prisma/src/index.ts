export * from './db';
export * from './migrate';
export * from './testing-db';
