export { createMemoryStorage, type MemoryStorageOptions } from './memory-storage';
export { MemoryStore } from './langgraph/memory-store';
