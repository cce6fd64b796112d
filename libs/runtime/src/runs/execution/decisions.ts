import type {
  FieldIssue,
  HitlDecision,
  InterruptOn,
  PendingAction,
  PendingToolCall,
} from '@cognition/contracts';
import type { AIMessage } from '@langchain/core/messages';
import { AIMessage as AIMessageClass } from '@langchain/core/messages';
import { RuntimeError } from '../../errors';
import type { RuntimeTool } from '../../tools/types';
import { checkToolArgs } from '../../tools/types';
import { TOOL_EXIT } from './tool-call';

/** What the model is told when a person rejects a call without saying why. */
const DEFAULT_REJECTION = 'The user rejected this tool call; it was not run.';

/**
 * The calls of `message` whose tool the agent lists in `interrupt_on`, with their decisions,
 * and the calls of tools the client runs (`clientTools`), answered with `respond` only.
 */
export function callsToDecide(
  message: AIMessage,
  interruptOn: InterruptOn,
  skip: (id: string) => boolean = () => false,
  clientTools: ReadonlySet<string> = new Set(),
): PendingToolCall[] {
  const out: PendingToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    const allowed = clientTools.has(call.name) ? ['respond' as const] : interruptOn[call.name];
    if (!allowed || call.id === undefined || skip(call.id)) continue;
    out.push({ id: call.id, name: call.name, args: call.args, allowed: [...allowed] });
  }
  return out;
}

/**
 * How one tool call of a message is answered once decisions were given: run (as written or
 * edited), or answered without running (rejected, or the client's result).
 */
export type DecidedCall =
  | { id: string; name: string; args: Record<string, unknown>; run: true; edited: boolean }
  | { id: string; name: string; run: false; output: string; exitCode: number };

/**
 * The calls of `message` as the decisions say to answer them (a call without a decision runs
 * as written), and — when a decision edited arguments — the message with them, which replaces
 * the original in the thread so the history shows what actually ran.
 */
export function applyDecisions(
  message: AIMessage,
  decisions: readonly HitlDecision[] | undefined,
): { calls: DecidedCall[]; edited: AIMessage | null } {
  const byId = new Map((decisions ?? []).map((d) => [d.tool_call_id, d]));
  let changed = false;
  const calls: DecidedCall[] = [];
  const toolCalls = (message.tool_calls ?? []).map((call) => {
    const id = call.id ?? '';
    const decision = byId.get(id);
    if (decision?.type === 'reject') {
      calls.push({
        id,
        name: call.name,
        run: false,
        output: decision.message ?? DEFAULT_REJECTION,
        exitCode: TOOL_EXIT.rejected,
      });
      return call;
    }
    if (decision?.type === 'respond') {
      calls.push({ id, name: call.name, run: false, output: decision.output, exitCode: 0 });
      return call;
    }
    if (decision?.type === 'edit') {
      changed = true;
      calls.push({ id, name: call.name, args: decision.args, run: true, edited: true });
      return { ...call, args: decision.args };
    }
    calls.push({ id, name: call.name, args: call.args, run: true, edited: false });
    return call;
  });
  if (!changed) return { calls, edited: null };
  const edited = new AIMessageClass({
    id: message.id,
    content: message.content,
    tool_calls: toolCalls,
    usage_metadata: message.usage_metadata,
    response_metadata: message.response_metadata,
    additional_kwargs: message.additional_kwargs,
  });
  return { calls, edited };
}

/**
 * Checks a person's decisions against what the run waits for: exactly one decision per pending
 * call, each of a type the call allows, edited arguments valid for the tool.
 * @throws RuntimeError VALIDATION_ERROR naming every problem (`decisions.<i>.<field>`).
 */
export function validateDecisions(
  action: PendingAction,
  decisions: readonly HitlDecision[],
  tools: readonly RuntimeTool[],
): void {
  const issues: FieldIssue[] = [];
  const pending = new Map(action.tool_calls.map((call) => [call.id, call]));
  const seen = new Set<string>();
  decisions.forEach((decision, index) => {
    const at = `decisions.${index}`;
    const call = pending.get(decision.tool_call_id);
    if (!call) {
      const known = [...pending.keys()].join(', ');
      issues.push({
        path: `${at}.tool_call_id`,
        message: `no pending tool call "${decision.tool_call_id}" (pending: ${known})`,
      });
      return;
    }
    if (seen.has(call.id)) {
      issues.push({ path: `${at}.tool_call_id`, message: `a second decision for "${call.id}"` });
      return;
    }
    seen.add(call.id);
    if (!call.allowed.includes(decision.type)) {
      issues.push({
        path: `${at}.type`,
        message: `"${decision.type}" is not allowed for ${call.name} (allowed: ${call.allowed.join(', ')})`,
      });
      return;
    }
    if (decision.type === 'edit') {
      const tool = tools.find((t) => t.name === call.name);
      const checked = tool ? checkToolArgs(tool, decision.args) : null;
      if (checked && !checked.ok) {
        for (const issue of checked.issues) {
          issues.push({ path: `${at}.args.${issue.path}`, message: issue.message });
        }
      }
    }
  });
  for (const call of action.tool_calls) {
    if (!seen.has(call.id)) {
      issues.push({
        path: 'decisions',
        message: `no decision for tool call "${call.id}" (${call.name})`,
      });
    }
  }
  if (issues.length > 0) {
    throw new RuntimeError(
      'VALIDATION_ERROR',
      `Invalid decisions: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  }
}
