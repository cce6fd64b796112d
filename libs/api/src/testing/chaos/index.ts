export * from './model';
export * from './faults';
export * from './stream-check';
export * from './turn-client';
export * from './checks';
export * from './run';
