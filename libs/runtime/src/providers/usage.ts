import type { Usage } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import type { Price } from './config';
import { costOf } from './pricing';

/** What one model call added to a meter. */
export interface CallUsage {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** The provider reported nothing: the tokens are an estimate. */
  estimated: boolean;
  /** USD at the meter's price; null when the price is unknown. */
  costUsd: number | null;
}

/** Rough tokens of a text (about four characters per token), for providers that report none. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function estimateMessagesTokens(messages: readonly BaseMessage[]): number {
  let total = 0;
  for (const message of messages) {
    const content =
      typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
    const calls = (message as { tool_calls?: unknown[] }).tool_calls;
    // A few tokens of per-message overhead, as chat formats add role markers.
    total +=
      estimateTokens(content) + (calls?.length ? estimateTokens(JSON.stringify(calls)) : 0) + 4;
  }
  return total;
}

/**
 * Token accounting across the model calls of one run. Each call contributes what the provider
 * reported; a call without reported usage contributes an estimate and marks the total estimated.
 * Subagent runs (which may use another model, hence another price) are merged as nested meters.
 */
export class UsageMeter {
  private ownInput = 0;
  private ownOutput = 0;
  private ownEstimated = false;
  private ownCalls = 0;
  private readonly nested: UsageMeter[] = [];
  private parent: UsageMeter | null = null;
  private listener: ((call: CallUsage) => void) | null = null;

  constructor(
    readonly provider: string,
    readonly model: string,
    private readonly price: Price | null,
  ) {}

  get inputTokens(): number {
    return this.nested.reduce((sum, m) => sum + m.inputTokens, this.ownInput);
  }

  get outputTokens(): number {
    return this.nested.reduce((sum, m) => sum + m.outputTokens, this.ownOutput);
  }

  get estimated(): boolean {
    return this.ownEstimated || this.nested.some((m) => m.estimated);
  }

  get calls(): number {
    return this.nested.reduce((sum, m) => sum + m.calls, this.ownCalls);
  }

  /**
   * Counts one model call: what the provider reported, else an estimate. Returns what was
   * counted, which also goes to the listener of this meter or of the nearest meter it is nested in.
   */
  add(
    reported: { input_tokens?: number; output_tokens?: number } | undefined,
    estimate: () => { input: number; output: number },
  ): CallUsage {
    this.ownCalls += 1;
    let input: number;
    let output: number;
    const estimated = !(
      reported &&
      (reported.input_tokens !== undefined || reported.output_tokens !== undefined)
    );
    if (estimated) {
      ({ input, output } = estimate());
      this.ownEstimated = true;
    } else {
      input = reported?.input_tokens ?? 0;
      output = reported?.output_tokens ?? 0;
    }
    this.ownInput += input;
    this.ownOutput += output;
    const call: CallUsage = {
      provider: this.provider,
      model: this.model,
      inputTokens: input,
      outputTokens: output,
      estimated,
      costUsd: costOf(input, output, this.price),
    };
    this.notify(call);
    return call;
  }

  addNested(other: UsageMeter): void {
    this.nested.push(other);
    other.parent = this;
  }

  /** Receives every call counted by this meter and the meters nested in it (telemetry). */
  onCall(listener: (call: CallUsage) => void): void {
    this.listener = listener;
  }

  private notify(call: CallUsage): void {
    if (this.listener) this.listener(call);
    else this.parent?.notify(call);
  }

  /** USD; null as soon as any model involved has an unknown price. */
  cost(): number | null {
    let total = costOf(this.ownInput, this.ownOutput, this.price);
    for (const meter of this.nested) {
      const cost = meter.cost();
      total = total === null || cost === null ? null : total + cost;
    }
    return total === null ? null : Math.round(total * 1e6) / 1e6;
  }

  toUsage(): Usage {
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      costUsd: this.cost(),
      model: this.model,
      provider: this.provider,
      estimated: this.estimated,
    };
  }
}
