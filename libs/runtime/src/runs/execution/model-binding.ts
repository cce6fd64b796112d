import type { ClientTool } from '@cognition/contracts';
import type { CircuitBreaker } from '@cognition/circuit-breaker';
import { RuntimeError } from '../../errors';
import { isProviderOutage } from '../../providers/chat-model';
import type { ResolvedModel } from '../../providers/registry';
import { toToolDefinition } from '../../tools/catalog';
import type { RuntimeTool } from '../../tools/types';
import type { BoundChatModel } from './agent-turn';
import type { RunContext } from '../run-context';

/** The shared circuit breaker `llm:<providerId>` of a resolved model. */
export function breakerFor(ctx: RunContext, resolved: ResolvedModel): CircuitBreaker {
  return ctx.breakers.get(`llm:${resolved.provider.id}`, {
    ...ctx.breakerOptions,
    isFailure: isProviderOutage,
  });
}

/**
 * The chat model of `resolved`, bound to `tools` and the run's client tools when there are any
 * (a client tool is offered with the JSON Schema the client gave).
 */
export async function bindModel(
  ctx: RunContext,
  resolved: ResolvedModel,
  tools: readonly RuntimeTool[],
  clientTools: readonly ClientTool[] = [],
): Promise<BoundChatModel> {
  const chat = await ctx.chatModelFactory(resolved);
  if (tools.length === 0 && clientTools.length === 0) return chat;
  if (typeof chat.bindTools !== 'function') {
    throw new RuntimeError(
      'PROVIDER_CONFIG_ERROR',
      `The model of provider "${resolved.provider.id}" does not support tool calling`,
    );
  }
  return chat.bindTools([
    ...tools.map(toToolDefinition),
    ...clientTools.map((tool) => ({
      type: 'function' as const,
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    })),
  ]);
}
