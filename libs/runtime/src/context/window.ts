import type { ContextStrategy, SummaryCoverage } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import {
  SystemMessage,
  ToolMessage,
  isHumanMessage,
  isToolMessage,
} from '@langchain/core/messages';
import type { ContextState } from '../graph/agent-state';
import type { TokenCounter } from './token-counter';
import { MESSAGE_OVERHEAD } from './token-counter';

/** The settings a compaction plan needs, resolved for one model. */
export interface WindowSettings {
  strategy: Exclude<ContextStrategy, 'none'>;
  budget: number;
  keepLastMessages: number;
  toolOutputMaxTokens: number;
}

/** After a compaction the input should fit this share of the budget, so it is not redone at once. */
const COMPACTION_TARGET_SHARE = 0.6;

/** Room reserved for the summary: this share of the budget, at most {@link SUMMARY_MAX_TOKENS}. */
const SUMMARY_BUDGET_SHARE = 0.15;
const SUMMARY_MAX_TOKENS = 2000;

export function summaryAllowance(budget: number): number {
  return Math.max(64, Math.min(SUMMARY_MAX_TOKENS, Math.floor(budget * SUMMARY_BUDGET_SHARE)));
}

/** The system message of a call: the agent's prompt, then the summary (one system message). */
export function systemMessage(systemPrompt: string, summary: string | null): SystemMessage {
  return new SystemMessage(
    summary === null
      ? systemPrompt
      : `${systemPrompt}\n\n<conversation_summary>\nThe earlier part of this conversation, summarized (the full messages are kept in the session's history):\n${summary}\n</conversation_summary>`,
  );
}

/**
 * Where the window of `history` starts according to `state`: the compacted prefix, when the
 * thread still starts with the messages it names. A thread that no longer does (rewound or
 * forked before that point) gets no summary and a window from its first message.
 */
export function windowStart(history: readonly BaseMessage[], state: ContextState | null): number {
  const compacted = state?.compacted;
  if (!compacted) return 0;
  const count = compacted.message_count;
  if (count > history.length) return 0;
  const first = history[0]?.id;
  const last = history[count - 1]?.id;
  return first === compacted.first_message_id && last === compacted.last_message_id ? count : 0;
}

/**
 * What the model is shown of a tool result: the result itself when it fits
 * `maxTokens`, else its beginning and a note saying where the rest is and how to read it.
 * The checkpoint (and so the messages API) keeps the whole result.
 */
export function shownToModel(
  message: BaseMessage,
  maxTokens: number,
  counter: TokenCounter,
): BaseMessage {
  if (!isToolMessage(message) || typeof message.content !== 'string') return message;
  const text = message.content;
  // Each token spans at least one character; otherwise the (cached) message count decides.
  if (text.length <= maxTokens) return message;
  const tokens = counter.message(message) - MESSAGE_OVERHEAD;
  if (tokens <= maxTokens) return message;
  const keep = Math.max(0, Math.floor((text.length * maxTokens * 0.9) / tokens));
  const note =
    `\n\n[Output truncated for the model: the first ${keep} of ${text.length} characters ` +
    `are shown (about ${tokens} tokens in full; the limit is ${maxTokens}). The whole output is ` +
    `kept in the session history (message ${message.id ?? message.tool_call_id}). To see more, ` +
    `read the file in ranges (read_file with offset and limit) or re-run the command with its ` +
    `output narrowed (head, tail, grep).]`;
  return new ToolMessage({
    id: message.id,
    tool_call_id: message.tool_call_id,
    name: message.name,
    status: message.status,
    content: text.slice(0, keep) + note,
    additional_kwargs: message.additional_kwargs,
  });
}

/** One candidate start of the window: never a tool result (its call would be cut off). */
function boundaries(history: readonly BaseMessage[], from: number): number[] {
  const turns: number[] = [];
  const steps: number[] = [];
  for (let i = from + 1; i < history.length; i += 1) {
    const message = history[i];
    if (!message || isToolMessage(message)) continue;
    if (isHumanMessage(message)) turns.push(i);
    steps.push(i);
  }
  // Whole turns (a user message first) whenever one qualifies; else any step of the current turn.
  return turns.length > 0 ? [...turns, ...steps.filter((i) => i > (turns.at(-1) ?? 0))] : steps;
}

export interface WindowPlan {
  /** The new start of the window (messages before it leave it). */
  start: number;
  /** Tokens of the visible messages from `start` on. */
  messageTokens: number;
}

/**
 * Chooses how far the window start moves so that the call fits: the earliest whole-turn
 * boundary after which the input fits {@link COMPACTION_TARGET_SHARE} of the budget, provided it
 * keeps the last `keepLastMessages` messages verbatim; if it would not, the latest boundary that
 * keeps them and fits the budget; failing that, the earliest boundary that fits at all. Tool
 * calls and their results are never split (no boundary falls on a tool result).
 * @returns null when not even the last turn fits.
 */
export function planWindow(input: {
  tokens: readonly number[];
  history: readonly BaseMessage[];
  from: number;
  fixedTokens: number;
  budget: number;
  keepLastMessages: number;
}): WindowPlan | null {
  const { tokens, history, from, fixedTokens, budget, keepLastMessages } = input;
  const suffix: number[] = new Array<number>(history.length + 1).fill(0);
  for (let i = history.length - 1; i >= from; i -= 1) {
    suffix[i] = (suffix[i + 1] ?? 0) + (tokens[i - from] ?? 0);
  }
  const fits = (start: number, limit: number) => fixedTokens + (suffix[start] ?? 0) <= limit;
  const candidates = boundaries(history, from);
  const target = Math.floor(budget * COMPACTION_TARGET_SHARE);
  const keepLimit = history.length - keepLastMessages;
  const toPlan = (start: number): WindowPlan => ({ start, messageTokens: suffix[start] ?? 0 });
  const preferred = candidates.find((c) => fits(c, target));
  if (preferred !== undefined && preferred <= keepLimit) return toPlan(preferred);
  const keeping = candidates.filter((c) => c <= keepLimit && fits(c, budget)).at(-1);
  if (keeping !== undefined) return toPlan(keeping);
  const any = candidates.find((c) => fits(c, budget));
  return any === undefined ? null : toPlan(any);
}

/** The coverage record of the first `count` messages of `history`. */
export function coverage(history: readonly BaseMessage[], count: number): SummaryCoverage {
  const idOf = (index: number) => history[index]?.id ?? `position-${index}`;
  return { message_count: count, first_message_id: idOf(0), last_message_id: idOf(count - 1) };
}
