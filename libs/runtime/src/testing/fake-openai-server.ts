import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted reply of the fake server. */
export interface FakeCompletion {
  /** Content deltas, one SSE chunk each (a string is split into words). */
  text?: string | string[];
  /** Tool calls; `args` as a string is sent verbatim (so it can be invalid JSON). */
  toolCalls?: { id?: string; name: string; args: Record<string, unknown> | string }[];
  /**
   * Usage chunk sent when the client asked for it (`stream_options.include_usage`). Default:
   * computed from the sizes of the request and reply. null: never sent.
   */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** Delay before each chunk (default: the server's `chunkDelayMs`). */
  chunkDelayMs?: number;
  /** Answer with this HTTP error status instead (e.g. 500, 429, 400). */
  status?: number;
  /** Error message of a scripted error status. */
  errorMessage?: string;
  /** Send this many content chunks, then neither finish nor close. 0: hang after headers. */
  hangAfterChunks?: number;
  /** Model name reported in chunks (default: the requested model). */
  model?: string;
}

/** A request the fake server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (the Chat Completions request). */
  body: {
    model?: string;
    stream?: boolean;
    messages?: { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
    tools?: {
      type: string;
      function: { name: string; description?: string; parameters?: unknown };
    }[];
    temperature?: number;
    max_tokens?: number;
    max_completion_tokens?: number;
    stream_options?: { include_usage?: boolean };
    [key: string]: unknown;
  };
  receivedAt: Date;
  /** Set when the client closed the connection before the reply ended (e.g. an abort). */
  clientClosedAt: Date | null;
  /** When the exchange ended: the reply finished or the connection closed (null meanwhile). */
  endedAt: Date | null;
}

export type FakeScriptEntry = FakeCompletion | ((request: RecordedRequest) => FakeCompletion);

export interface FakeOpenAIServerOptions {
  /** Default delay before each chunk. Default 0. */
  chunkDelayMs?: number;
  /**
   * Reply used when the script is empty; a function sees the request (e.g. to answer a tool
   * result with text, for any number of concurrent conversations). Default: an HTTP 500 saying
   * the script is exhausted.
   */
  fallback?: FakeScriptEntry;
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

function words(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/**
 * A loopback HTTP server speaking enough of the OpenAI Chat Completions API for the real
 * `openai_compatible` provider: `POST /v1/chat/completions` with `stream: true` (SSE chunks,
 * tool-call deltas, a usage chunk, `[DONE]`) or without (one JSON completion), scripted errors
 * and hangs. Every request body is recorded so tests can assert what the model received.
 */
export class FakeOpenAIServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeScriptEntry[] = [];
  private counter = 0;

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    private readonly options: FakeOpenAIServerOptions,
  ) {}

  static async start(options: FakeOpenAIServerOptions = {}): Promise<FakeOpenAIServer> {
    const holder: { instance?: FakeOpenAIServer } = {};
    const server = createServer((req, res) => {
      if (holder.instance) void holder.instance.handle(req, res);
    });
    const instance = new FakeOpenAIServer(server, options);
    holder.instance = instance;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return instance;
  }

  /** `http://127.0.0.1:<port>/v1`, the provider's `baseUrl`. */
  get baseUrl(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  /** Appends replies to the script. */
  enqueue(...entries: FakeScriptEntry[]): this {
    this.queue.push(...entries);
    return this;
  }

  /** Names of the tools offered in the `index`-th chat completion request. */
  toolNames(index: number): string[] {
    return (this.requests[index]?.body.tools ?? []).map((tool) => tool.function.name);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve, reject) =>
      this.server.close((error) => (error ? reject(error) : resolve())),
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: RecordedRequest['body'] = {};
    try {
      body = raw === '' ? {} : (JSON.parse(raw) as RecordedRequest['body']);
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: 'invalid JSON body', type: 'invalid_request_error' } }),
      );
      return;
    }
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      receivedAt: new Date(),
      clientClosedAt: null,
      endedAt: null,
    };
    if (record.method !== 'POST' || !record.path.startsWith('/v1/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${record.method} ${record.path}` } }));
      return;
    }
    this.requests.push(record);
    res.on('close', () => {
      record.endedAt = new Date();
      if (!res.writableFinished) record.clientClosedAt = new Date();
    });
    const entry = this.queue.shift() ??
      this.options.fallback ?? {
        status: 500,
        errorMessage: 'fake server: the script is exhausted',
      };
    const reply: FakeCompletion = typeof entry === 'function' ? entry(record) : entry;
    if (reply.status !== undefined && reply.status >= 400) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: reply.errorMessage ?? `scripted HTTP ${reply.status}`,
            type: reply.status >= 500 ? 'server_error' : 'invalid_request_error',
          },
        }),
      );
      return;
    }
    if (body.stream) await this.stream(record, reply, res);
    else this.complete(record, reply, res);
  }

  private usageOf(record: RecordedRequest, reply: FakeCompletion, text: string) {
    if (reply.usage === null) return null;
    if (reply.usage) return reply.usage;
    return {
      prompt_tokens: Math.ceil(JSON.stringify(record.body.messages ?? []).length / 4),
      completion_tokens: Math.ceil(
        (text.length + JSON.stringify(reply.toolCalls ?? []).length) / 4,
      ),
    };
  }

  private toolCallsOf(reply: FakeCompletion) {
    return (reply.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_fake_${this.counter}_${index}`,
      name: call.name,
      arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args),
    }));
  }

  private complete(record: RecordedRequest, reply: FakeCompletion, res: ServerResponse): void {
    this.counter += 1;
    const text = Array.isArray(reply.text) ? reply.text.join('') : (reply.text ?? '');
    const calls = this.toolCallsOf(reply);
    const usage = this.usageOf(record, reply, text);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-fake-${this.counter}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: reply.model ?? record.body.model ?? 'fake',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: text === '' && calls.length ? null : text,
              ...(calls.length
                ? {
                    tool_calls: calls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.arguments },
                    })),
                  }
                : {}),
            },
            finish_reason: calls.length ? 'tool_calls' : 'stop',
          },
        ],
        ...(usage
          ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }
          : {}),
      }),
    );
  }

  private async stream(
    record: RecordedRequest,
    reply: FakeCompletion,
    res: ServerResponse,
  ): Promise<void> {
    this.counter += 1;
    const id = `chatcmpl-fake-${this.counter}`;
    const model = reply.model ?? record.body.model ?? 'fake';
    const created = Math.floor(Date.now() / 1000);
    const delay = reply.chunkDelayMs ?? this.options.chunkDelayMs ?? 0;
    const send = (payload: unknown): boolean => {
      if (res.destroyed) return false;
      res.write(`data: ${JSON.stringify(payload)}\n\n`);
      return true;
    };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const pieces = Array.isArray(reply.text) ? reply.text : words(reply.text ?? '');
    if (reply.hangAfterChunks === 0) return;
    let sent = 0;
    for (const [index, piece] of pieces.entries()) {
      await sleep(delay);
      if (!send(chunk(index === 0 ? { role: 'assistant', content: piece } : { content: piece })))
        return;
      sent += 1;
      if (reply.hangAfterChunks !== undefined && sent >= reply.hangAfterChunks) return;
    }
    if (reply.hangAfterChunks !== undefined) return;
    const calls = this.toolCallsOf(reply);
    for (const [index, call] of calls.entries()) {
      await sleep(delay);
      send(
        chunk({
          ...(sent === 0 && index === 0 ? { role: 'assistant', content: null } : {}),
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        }),
      );
      // Arguments arrive in fragments, as real providers send them.
      const mid = Math.ceil(call.arguments.length / 2);
      for (const part of [call.arguments.slice(0, mid), call.arguments.slice(mid)]) {
        if (part !== '') send(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
      }
    }
    await sleep(delay);
    send(chunk({}, calls.length ? 'tool_calls' : 'stop'));
    const usage = this.usageOf(record, reply, pieces.join(''));
    if (usage && record.body.stream_options?.include_usage) {
      send({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      });
    }
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  }
}
