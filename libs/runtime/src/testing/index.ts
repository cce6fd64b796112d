export * from './scripted-chat-model';
export * from './fake-openai-server';
export * from './fake-execution-backend';
export * from './sse-reader';
export * from './event-log-conformance';
export * from './mcp-test-server';
