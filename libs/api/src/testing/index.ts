export * from './test-server';
export * from './fuzz';
export * from './chaos';
