import type { ClientTool, FieldIssue, HitlDecision, Run } from '@cognition/contracts';
import { CLIENT_TOOLS_MAX, ClientToolSchema } from '@cognition/contracts';
import { z } from 'zod';

const ContentSchema = z.union([
  z.string(),
  z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
]);

/** The fields of AG-UI's `RunAgentInput` this endpoint reads (the rest is accepted, unused). */
export const RunAgentInputSchema = z.looseObject({
  threadId: z.string().min(1).max(256),
  runId: z.string().min(1).max(256),
  messages: z.array(
    z.looseObject({
      id: z.string(),
      role: z.string(),
      content: ContentSchema.optional(),
      toolCallId: z.string().optional(),
    }),
  ),
  tools: z
    .array(
      z.looseObject({
        name: ClientToolSchema.shape.name,
        description: ClientToolSchema.shape.description,
        parameters: ClientToolSchema.shape.parameters,
      }),
    )
    .max(CLIENT_TOOLS_MAX)
    .default([]),
});
export type RunAgentInput = z.output<typeof RunAgentInputSchema>;

export function textOf(content: z.infer<typeof ContentSchema> | undefined): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => part.text ?? '').join('');
}

/**
 * The input's frontend tools as client tools of the run; a name that is also one of the agent's
 * own tools, or given twice, is an issue naming `body.tools.<i>.name`.
 */
export function clientToolsOf(
  input: RunAgentInput,
  agentTools: readonly string[],
): { tools: ClientTool[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  input.tools.forEach((tool, index) => {
    const path = `body.tools.${index}.name`;
    if (agentTools.includes(tool.name)) {
      issues.push({ path, message: `"${tool.name}" is a tool of the agent itself` });
    } else if (seen.has(tool.name)) {
      issues.push({ path, message: `a second tool named "${tool.name}"` });
    }
    seen.add(tool.name);
  });
  const tools = input.tools.map(({ name, description, parameters }) => ({
    name,
    description,
    parameters,
  }));
  return { tools, issues };
}

/**
 * The client's results for the tool calls a paused run waits on: one `respond` decision per
 * pending call, from the input's `tool` messages (`toolCallId`). null when the run waits on
 * something else (a person's decision) or a call has no result in the input.
 */
export function clientResults(run: Run, input: RunAgentInput): HitlDecision[] | null {
  const calls = run.pendingAction?.tool_calls ?? [];
  const results = new Map(
    input.messages
      .filter((m) => m.role === 'tool' && m.toolCallId !== undefined)
      .map((m) => [m.toolCallId, textOf(m.content)]),
  );
  const decisions: HitlDecision[] = [];
  for (const call of calls) {
    const output = results.get(call.id);
    if (!call.allowed.includes('respond') || output === undefined) return null;
    decisions.push({ tool_call_id: call.id, type: 'respond', output });
  }
  return decisions.length > 0 ? decisions : null;
}
