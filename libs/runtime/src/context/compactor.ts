import type { AgentEventOf, ContextParts } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import { RuntimeError } from '../errors';
import { clampToTokens } from './summarizer';
import type { Summarizer } from './summarizer';
import type { TokenCounter } from './token-counter';
import type { ContextState } from '../graph/agent-state';
import type { WindowSettings } from './window';
import {
  coverage,
  planWindow,
  shownToModel,
  summaryAllowance,
  systemMessage,
  windowStart,
} from './window';

export interface CompactorOptions {
  settings: WindowSettings;
  counter: TokenCounter;
  systemPrompt: string;
  /** Tokens of the tool schemas bound to the model (sent with every call). */
  toolSchemaTokens: number;
  /** Writes summaries (strategy `summarize`). */
  summarizer: Summarizer | null;
}

/** What one model call would be sent, measured. */
export interface Measured {
  /** The call input: the system message (prompt + summary) and the visible messages. */
  input: BaseMessage[];
  /** Index in the thread of the first visible message. */
  start: number;
  parts: ContextParts;
  truncatedToolOutputs: number;
  /** `parts.total` scaled by the provider calibration: what is compared with the budget. */
  effectiveTokens: number;
}

/**
 * Measures what a model call over `history` would be sent given the context `state`: the system
 * message (prompt, then the summary), the messages from the window start on (tool results above
 * `toolOutputMaxTokens` truncated), and the tool schemas.
 */
export function measureContext(
  history: readonly BaseMessage[],
  state: ContextState | null,
  options: {
    counter: TokenCounter;
    systemPrompt: string;
    toolSchemaTokens: number;
    toolOutputMaxTokens: number;
  },
): Measured {
  const { counter, systemPrompt, toolSchemaTokens, toolOutputMaxTokens } = options;
  const start = windowStart(history, state);
  const summary = start > 0 ? (state?.summary ?? null) : null;
  const visible = history.slice(start).map((m) => shownToModel(m, toolOutputMaxTokens, counter));
  const truncated = visible.filter((m, i) => m !== history[start + i]).length;
  const system = systemMessage(systemPrompt, summary);
  const promptTokens = counter.message(systemMessage(systemPrompt, null));
  const systemTokens = summary === null ? promptTokens : counter.message(system);
  const messages = visible.reduce((sum, m) => sum + counter.message(m), 0);
  const total = systemTokens + toolSchemaTokens + messages;
  return {
    input: [system, ...visible],
    start,
    parts: {
      system_prompt: promptTokens,
      tool_schemas: toolSchemaTokens,
      summary: systemTokens - promptTokens,
      messages,
      total,
    },
    truncatedToolOutputs: truncated,
    effectiveTokens: Math.ceil(total * Math.max(1, state?.token_ratio ?? 1)),
  };
}

/** The input of a model call after compaction, and the state to checkpoint. */
export interface Prepared {
  input: BaseMessage[];
  state: ContextState | null;
  /** True when `state` differs from the state given (it must be checkpointed). */
  changed: boolean;
  /** Counted tokens of `input` (with the tool schemas), for the provider calibration. */
  counted: number;
  event: AgentEventOf<'compaction'> | null;
}

/**
 * Keeps each model call of a thread within its budget (see docs/agents.md "Context"): measures
 * what a call would send, and when it exceeds the budget moves the window start forward —
 * summarizing the messages that leave it (`summarize`) or dropping them (`sliding_window`).
 * Tool results above `toolOutputMaxTokens` are shown truncated. Never changes the thread itself.
 */
export class ContextCompactor {
  constructor(private readonly options: CompactorOptions) {}

  measure(history: readonly BaseMessage[], state: ContextState | null): Measured {
    return measureContext(history, state, {
      ...this.options,
      toolOutputMaxTokens: this.options.settings.toolOutputMaxTokens,
    });
  }

  /**
   * The input of the next model call. `force` (after the provider rejected a call as too long)
   * compacts to half the tokens of the rejected input whatever the count says.
   * @throws RuntimeError CONTEXT_OVERFLOW when not even the last turn fits.
   */
  async prepare(
    history: readonly BaseMessage[],
    state: ContextState | null,
    options: { signal: AbortSignal; force?: boolean },
  ): Promise<Prepared> {
    const { counter, settings, summarizer } = this.options;
    const measured = this.measure(history, state);
    const ratio = Math.max(1, state?.token_ratio ?? 1);
    const budget = options.force
      ? Math.floor(Math.min(settings.budget, measured.effectiveTokens) / 2)
      : settings.budget;
    const unchanged = {
      input: measured.input,
      state,
      changed: false,
      counted: measured.parts.total,
      event: null,
    };
    if (measured.effectiveTokens <= budget) return unchanged;

    const summarize = settings.strategy === 'summarize' && summarizer !== null;
    const allowance = summarize ? summaryAllowance(budget) : 0;
    const fixed = measured.parts.system_prompt + measured.parts.tool_schemas + allowance;
    const visible = measured.input.slice(1);
    const plan = planWindow({
      tokens: visible.map((m) => Math.ceil(counter.message(m) * ratio)),
      history,
      from: measured.start,
      fixedTokens: Math.ceil(fixed * ratio),
      budget,
      keepLastMessages: settings.keepLastMessages,
    });
    if (!plan) {
      throw new RuntimeError(
        'CONTEXT_OVERFLOW',
        `The conversation does not fit the model's context budget of ${budget} tokens even after compaction: the system prompt and tool schemas take ${measured.parts.system_prompt + measured.parts.tool_schemas} tokens${summarize ? ` (plus ${allowance} reserved for the summary)` : ''} and the latest turn does not fit beside them`,
      );
    }
    const leaving = visible.slice(0, plan.start - measured.start);
    const previous = measured.start > 0 ? (state?.summary ?? null) : null;
    let summary: string | null = null;
    if (summarize) {
      // The summary's frame (tags and a sentence) comes out of its allowance too.
      const frame =
        counter.message(systemMessage(this.options.systemPrompt, '')) -
        measured.parts.system_prompt;
      const written = await summarizer.summarize(previous, leaving, allowance, options.signal);
      summary = clampToTokens(written, Math.max(16, allowance - frame), counter);
    }
    const next: ContextState = {
      summary,
      compacted: coverage(history, plan.start),
      ...(state?.token_ratio !== undefined ? { token_ratio: state.token_ratio } : {}),
    };
    let after = this.measure(history, next);
    // Token counts of joined texts are not exactly additive: trim the summary by any excess.
    while (next.summary && after.effectiveTokens > budget) {
      const excess = after.effectiveTokens - budget + 2;
      next.summary = clampToTokens(next.summary, counter.text(next.summary) - excess, counter);
      after = this.measure(history, next);
    }
    return {
      input: after.input,
      state: next,
      changed: true,
      counted: after.parts.total,
      event: {
        type: 'compaction',
        strategy: summarize ? 'summarize' : 'sliding_window',
        before_tokens: measured.parts.total,
        after_tokens: after.parts.total,
        summarized_messages: leaving.length,
        model: summarize ? summarizer.modelName : null,
      },
    };
  }

  /**
   * The state after a call the provider reported `reportedInput` input tokens for, having
   * counted `counted`: the ratio is kept when the provider counts more than we do.
   */
  calibrate(state: ContextState | null, counted: number, reportedInput: number): ContextState {
    const ratio = counted > 0 ? Math.round((reportedInput / counted) * 1000) / 1000 : 1;
    const base: ContextState = state ?? { summary: null, compacted: null };
    const { token_ratio: _previous, ...rest } = base;
    return ratio > 1 ? { ...rest, token_ratio: Math.min(ratio, 3) } : rest;
  }
}
