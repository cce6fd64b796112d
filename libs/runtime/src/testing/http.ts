/**
 * `@cognition/runtime/testing/http`: the fake OpenAI-compatible server and the SSE reader alone.
 * They load nothing but Node's HTTP: a spec of the built server that needs only these does not
 * load LangChain, the MCP SDK and the storage conformance with the `./testing` entry (about
 * 0.45 s of CPU per spec file under jest, whose module registry is per file).
 */
export * from './fake-openai-server';
export * from './sse-reader';
