export * from './common';
export * from './errors';
export * from './session';
export * from './message';
export * from './run';
export * from './callback';
export * from './events';
export * from './context';
