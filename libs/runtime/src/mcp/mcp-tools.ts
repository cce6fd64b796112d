import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaTool, ToolResult } from '../tools/types';
import { capOutput } from '../tools/types';

/**
 * What provider APIs accept as a function name (OpenAI and Anthropic alike): an MCP tool whose
 * namespaced name does not fit is not offered (the run's note names it).
 */
const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `mcp__<server>__<tool>`: the name the model, `interrupt_on` and the event stream use. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

export function isOfferableName(name: string): boolean {
  return PROVIDER_TOOL_NAME.test(name);
}

/** Calls one tool of the server (the pool's connection of the run). */
export type McpToolCaller = (
  tool: string,
  args: unknown,
  signal: AbortSignal,
) => Promise<ToolResult>;

/**
 * A server's tool as a runtime tool. Its input schema goes to the model as published; an
 * `idempotentHint` or `readOnlyHint` annotation makes it safe to repeat after a crash.
 */
export function toRuntimeTool(server: string, tool: Tool, call: McpToolCaller): JsonSchemaTool {
  const annotations = tool.annotations;
  return {
    name: mcpToolName(server, tool.name),
    description: tool.description ?? tool.title ?? annotations?.title ?? tool.name,
    inputSchema: tool.inputSchema,
    idempotent: annotations?.idempotentHint === true || annotations?.readOnlyHint === true,
    run: (args, ctx) => call(tool.name, args, ctx.signal),
  };
}

type ContentBlock = CallToolResult['content'][number];

/** Base64 length → decoded bytes, for the summaries of binary content. */
function decodedBytes(base64: string): number {
  return (
    Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0)
  );
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${block.mimeType}, ${decodedBytes(block.data)} bytes]`;
    case 'audio':
      return `[audio: ${block.mimeType}, ${decodedBytes(block.data)} bytes]`;
    case 'resource_link':
      return `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
    case 'resource': {
      const resource = block.resource;
      if ('text' in resource && typeof resource.text === 'string') return resource.text;
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
      return `[resource: ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}, ${decodedBytes(blob)} bytes]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/**
 * A tool result as the model gets it: the text blocks, other content summarised in one line
 * each (an image is not sent to the model), the structured content when there is no other
 * content. `isError` is exit code 1.
 */
export function formatToolResult(result: CallToolResult): ToolResult {
  const parts = result.content.map(blockText);
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  const output = parts.join('\n');
  return {
    output: capOutput(output === '' ? '(no content)' : output),
    exitCode: result.isError === true ? 1 : 0,
  };
}
