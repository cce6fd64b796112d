export * from './port';
export * from './errors';
export * from './scope';
export * from './projection';
export * from './scoped-store';
export * from './store-ttl';
export * from './projection-sync';
export * from './store-filter';
