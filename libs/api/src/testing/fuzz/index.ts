export * from './hostile';
export * from './requests';
export * from './runner';
export * from './schema-arbitrary';
export * from './targets';
export * from './seed';
