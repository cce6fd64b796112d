import type { FakeCompletion, RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';

/** The model every node of a chaos run talks to, and what it saw. */

const TURN_PREFIX = 'chaos turn ';
const KEY_PREFIX = 'chaos-key-';

/** The user message of a turn: its key is what ties model calls and stored rows to it. */
export function turnMessage(turn: string): string {
  return `${TURN_PREFIX}${turn}`;
}

/** The answer the model streams for `turn` (its words make a gap or a repeat visible). */
export function answerOf(turn: string, words: number): string {
  return [`answer to ${turn}:`, ...Array.from({ length: words }, (_, i) => `w${i + 1}`)].join(' ');
}

/** One model request of a run, as the fake model saw it. */
export interface ModelCall {
  turn: string;
  /** `node-2#3`: the node and which of its processes (each start is a new one). */
  process: string;
  kind: 'tool' | 'answer';
  receivedAt: number;
  /** When the exchange ended; null while it is still open. */
  endedAt: number | null;
}

function lastUserTurn(request: RecordedRequest): string | null {
  const users = (request.body.messages ?? []).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' && content.startsWith(TURN_PREFIX)
    ? content.slice(TURN_PREFIX.length)
    : null;
}

/**
 * A `FakeOpenAIServer` scripted for any number of concurrent turns: the first model call of a
 * turn asks for a `write_file` tool call, the call after the tool result streams
 * {@link answerOf}. Each node process gets its own API key ({@link ChaosModel.nodeEnv}), so
 * every request says which process made it: two processes executing one run at once show up
 * as overlapping or interleaved calls of one turn.
 */
export class ChaosModel {
  private readonly starts = new Map<number, number>();

  private constructor(
    readonly fake: FakeOpenAIServer,
    readonly answerWords: number,
  ) {}

  static async start(options: { answerWords: number; chunkDelayMs: number }): Promise<ChaosModel> {
    const holder: { model?: ChaosModel } = {};
    const fake = await FakeOpenAIServer.start({
      chunkDelayMs: options.chunkDelayMs,
      fallback: (request) => holder.model?.reply(request) ?? { status: 500 },
    });
    holder.model = new ChaosModel(fake, options.answerWords);
    return holder.model;
  }

  /** The provider settings of node `index`'s next process (a new key per start). */
  nodeEnv(index: number): Record<string, string> {
    const start = (this.starts.get(index) ?? 0) + 1;
    this.starts.set(index, start);
    return {
      COGNITION_LLM_PROVIDER: 'openai_compatible',
      COGNITION_LLM_MODEL: 'chaos-model',
      COGNITION_OPENAI_COMPATIBLE_BASE_URL: this.fake.baseUrl,
      COGNITION_OPENAI_COMPATIBLE_API_KEY: `${KEY_PREFIX}node-${index + 1}#${start}`,
    };
  }

  private reply(request: RecordedRequest): FakeCompletion {
    const turn = lastUserTurn(request);
    if (turn === null) return { text: 'ok' };
    const last = request.body.messages?.at(-1);
    if (last?.role === 'tool') return { text: answerOf(turn, this.answerWords) };
    return {
      toolCalls: [{ name: 'write_file', args: { path: `chaos/${turn}.txt`, content: turn } }],
    };
  }

  /** Every model request made for a turn so far. */
  calls(): ModelCall[] {
    return this.fake.requests.flatMap((request) => {
      const turn = lastUserTurn(request);
      if (turn === null) return [];
      const auth = String(request.headers['authorization'] ?? '');
      const at = auth.indexOf(KEY_PREFIX);
      return [
        {
          turn,
          process: at === -1 ? '?' : auth.slice(at + KEY_PREFIX.length),
          kind: request.body.messages?.at(-1)?.role === 'tool' ? 'answer' : 'tool',
          receivedAt: request.receivedAt.getTime(),
          endedAt: request.endedAt?.getTime() ?? null,
        } satisfies ModelCall,
      ];
    });
  }

  close(): Promise<void> {
    return this.fake.close();
  }
}
