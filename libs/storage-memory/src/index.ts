export { createMemoryStorage } from './memory-storage';
export { MemoryStore } from './memory-store';
