export { createMemoryStorage } from './memory-storage';
export { MemoryStore } from './langgraph/memory-store';
