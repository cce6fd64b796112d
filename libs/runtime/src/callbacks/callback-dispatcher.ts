import { createHmac, randomUUID } from 'node:crypto';
import type { CallbackAttempt, CallbackConfig } from '@cognition/contracts';
import { CALLBACK_ERROR_MAX } from '@cognition/contracts';
import type { PendingCallback, RunFence, RunStore } from '@cognition/storage';
import { isRunFenced } from '@cognition/storage';
import type { Logger } from '../logger';
import { refuseNonPublicHost } from '../net/public-address';
import { silentLogger } from '../logger';

/** The JSON body POSTed to a run's `callbackUrl` once the run ended. */
export interface CompletionPayload {
  session_id: string;
  /** The final assistant message, or null when the run produced none. */
  message_id: string | null;
  run_id: string;
  /** The run's final status: completed | failed | aborted | interrupted. */
  status: string;
  /** The final assistant text ('' when none). */
  output: string;
  token_usage: { input: number; output: number };
  model_used: string | null;
  /** ISO 8601. */
  completed_at: string;
  /** Why the run did not complete (null when it did). */
  error: { code: string; message: string } | null;
}

/**
 * Where the dispatcher keeps deliveries and records attempts: the storage backend's run store
 * (pending deliveries, so they survive a restart, and the attempts made).
 */
export type CallbackAttemptRecorder = Pick<
  RunStore,
  | 'recordCallbackAttempt'
  | 'savePendingCallback'
  | 'claimCallbackAttempt'
  | 'settlePendingCallback'
  | 'listPendingCallbacks'
>;

/** A delivery's body and the headers it is sent with besides ours. */
export interface CallbackRequest {
  body: string;
  headers: Record<string, string>;
}

/**
 * Shapes the callback of a run whose callback has a config (an A2A push notification: the
 * body an A2A task, its token and credentials in headers); given by the server, which speaks
 * A2A. Throws for a config it cannot shape (then the completion payload is sent).
 */
export type CallbackFormatter = (
  payload: CompletionPayload,
  config: CallbackConfig,
) => CallbackRequest | Promise<CallbackRequest>;

export interface CallbackOptions {
  /** HMAC-SHA256 key; when set every request carries `X-Cognition-Signature: sha256=<hex>`. */
  secret?: string;
  /** Attempts in total, first included. Default 5. */
  maxAttempts?: number;
  /** Delay before the second attempt; doubles each time. Default 1000 ms. */
  initialDelayMs?: number;
  /** Cap of the delay between attempts. Default 30 000 ms. */
  maxDelayMs?: number;
  /** Per-attempt time limit. Default 10 000 ms. */
  timeoutMs?: number;
  /**
   * Deliver to loopback, private and link-local addresses too. Default false: a callback URL
   * comes from the API caller, and without this check any caller could make the server POST
   * into its own network (databases, cloud metadata services). Turn on when receivers live on
   * the server's private network.
   */
  allowPrivateNetwork?: boolean;
  /** Shapes callbacks that have a config; without it every callback is the completion payload. */
  format?: CallbackFormatter;
  logger?: Logger;
}

const SIGNATURE_HEADER = 'x-cognition-signature';
const DELIVERY_HEADER = 'x-cognition-delivery';

/** `sha256=<hex>` of the raw body, as sent in `X-Cognition-Signature`. */
export function signPayload(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** 4xx other than 408 and 429 means the receiver rejected the payload: retrying cannot help. */
function isRetryable(status: number | null): boolean {
  return status === null || status >= 500 || status === 408 || status === 429;
}

/**
 * Delivers completion callbacks: POST with JSON body, optional HMAC signature, bounded
 * exponential backoff. Delivery is at-least-once per attempt sequence (a receiver should
 * de-duplicate by `X-Cognition-Delivery`, which stays the same across the retries of one run).
 * The delivery itself is stored (payload, attempts, next attempt time) until it succeeds or is
 * given up, so a process that stops with retries pending leaves them to the next one
 * (`resumePending`); each attempt is claimed in storage before it is made, so it is made once
 * across processes. Every attempt is recorded on its run, so the attempts outlive the process;
 * read them back with `RunStore.listCallbackAttempts`.
 */
export class CallbackDispatcher {
  private readonly pending = new Set<Promise<void>>();
  /** Deliveries this process is working on (by delivery id). */
  private readonly inFlight = new Set<string>();
  private readonly closing = new AbortController();
  private readonly maxAttempts: number;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly timeoutMs: number;
  private readonly logger: Logger;

  constructor(
    private readonly recorder: CallbackAttemptRecorder,
    private readonly options: CallbackOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 5;
    this.initialDelayMs = options.initialDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * Starts delivering in the background; the promise settles when delivery ended either way.
   * `config` (an A2A push notification's): the body and headers are what `format` makes of it.
   * `fence` (the claim the run was executed under, several nodes): the delivery is stored only
   * while the run is still held under it; refused, it is not sent — another claim took the
   * run over and ends it (run fencing: a node that lost a run records nothing more of it).
   */
  dispatch(
    url: string,
    payload: CompletionPayload,
    config: CallbackConfig | null = null,
    fence?: RunFence,
  ): Promise<void> {
    return this.track(async () => {
      const delivery: PendingCallback = {
        deliveryId: randomUUID(),
        runId: payload.run_id,
        url,
        ...(await this.request(payload, config)),
        attempts: 0,
        nextAttemptAt: new Date(),
      };
      let durable = true;
      try {
        await this.recorder.savePendingCallback(delivery, fence);
      } catch (error) {
        if (isRunFenced(error)) {
          this.logger.warn(
            { runId: delivery.runId },
            'run fenced: another claim took it over; its completion callback is not sent from here',
          );
          return;
        }
        // Storage trouble must not cost the receiver its callback: deliver from memory.
        durable = false;
        this.logger.error(
          { err: error, runId: delivery.runId, deliveryId: delivery.deliveryId },
          'could not store a pending completion callback; delivering without surviving a restart',
        );
      }
      await this.deliver(delivery, durable);
    });
  }

  private async request(
    payload: CompletionPayload,
    config: CallbackConfig | null,
  ): Promise<CallbackRequest> {
    const plain = { body: JSON.stringify(payload), headers: {} };
    if (config === null || this.options.format === undefined) return plain;
    try {
      return await this.options.format(payload, config);
    } catch (error) {
      this.logger.error(
        { err: error, runId: payload.run_id },
        'could not shape a completion callback by its config; sending the completion payload',
      );
      return plain;
    }
  }

  /**
   * Goes on with the deliveries a previous process left pending (at startup), each from its
   * next attempt at its due time. Returns how many.
   */
  async resumePending(): Promise<number> {
    const pending = await this.recorder.listPendingCallbacks();
    for (const delivery of pending) this.resume(delivery);
    return pending.length;
  }

  /**
   * Several nodes: goes on with deliveries whose next attempt is overdue by more than
   * `graceMs` (their node died); each attempt is still claimed in storage, so it is made once.
   */
  async resumeOverdue(graceMs: number): Promise<number> {
    const before = Date.now() - graceMs;
    const overdue = (await this.recorder.listPendingCallbacks()).filter(
      (d) => d.nextAttemptAt.getTime() < before && !this.inFlight.has(d.deliveryId),
    );
    for (const delivery of overdue) this.resume(delivery);
    return overdue.length;
  }

  private resume(delivery: PendingCallback): void {
    if (this.inFlight.has(delivery.deliveryId)) return;
    this.inFlight.add(delivery.deliveryId);
    void this.track(() =>
      this.deliver(delivery, true).finally(() => this.inFlight.delete(delivery.deliveryId)),
    );
  }

  /**
   * Stops retrying (an attempt in flight is cancelled) and waits for deliveries to settle;
   * stored deliveries with attempts left stay pending for the next process.
   */
  async close(): Promise<void> {
    this.closing.abort();
    await Promise.allSettled([...this.pending]);
  }

  private track(work: () => Promise<void>): Promise<void> {
    const delivery = work().finally(() => this.pending.delete(delivery));
    this.pending.add(delivery);
    return delivery;
  }

  /**
   * Storage trouble (down, the session deleted meanwhile) must not cost the receiver its
   * callback: the failure is logged and delivery goes on.
   */
  private async record(attempt: CallbackAttempt): Promise<void> {
    try {
      await this.recorder.recordCallbackAttempt(attempt);
    } catch (error) {
      this.logger.error(
        {
          err: error,
          runId: attempt.runId,
          deliveryId: attempt.deliveryId,
          attempt: attempt.attempt,
        },
        'could not record a completion callback attempt',
      );
    }
  }

  /** true when this process may make `attempt` (claimed in storage, or not durable). */
  private async claim(delivery: PendingCallback, attempt: number, durable: boolean) {
    if (!durable) return true;
    try {
      return await this.recorder.claimCallbackAttempt(delivery.deliveryId, attempt);
    } catch (error) {
      this.logger.error(
        { err: error, deliveryId: delivery.deliveryId, attempt },
        'could not claim a completion callback attempt; not making it',
      );
      return false;
    }
  }

  private async settle(delivery: PendingCallback, next: Date | null, durable: boolean) {
    if (!durable) return;
    try {
      await this.recorder.settlePendingCallback(delivery.deliveryId, next);
    } catch (error) {
      this.logger.error(
        { err: error, deliveryId: delivery.deliveryId },
        'could not update a pending completion callback',
      );
    }
  }

  private async deliver(delivery: PendingCallback, durable: boolean): Promise<void> {
    const { deliveryId, url, body, runId } = delivery;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'cognition-callback/1',
      // Lower-cased so a content type of the config's replaces ours rather than doubling it.
      ...Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k.toLowerCase(), v])),
      [DELIVERY_HEADER]: deliveryId,
    };
    if (this.options.secret !== undefined)
      headers[SIGNATURE_HEADER] = signPayload(this.options.secret, body);
    let due = delivery.nextAttemptAt.getTime();
    for (let attempt = delivery.attempts + 1; attempt <= this.maxAttempts; attempt += 1) {
      await sleep(due - Date.now(), this.closing.signal);
      if (this.closing.signal.aborted) return;
      if (!(await this.claim(delivery, attempt, durable))) return;
      const startedAt = new Date();
      // Monotonic, so a wall-clock step during the request cannot make the duration negative.
      const started = performance.now();
      const { status, error, final } = await this.post(url, headers, body);
      const ok = error === null;
      await this.record({
        runId,
        deliveryId,
        url,
        attempt,
        startedAt,
        durationMs: Math.round(performance.now() - started),
        status,
        ok,
        error,
      });
      if (ok) {
        await this.settle(delivery, null, durable);
        return;
      }
      if (final || !isRetryable(status) || attempt === this.maxAttempts) {
        this.logger.warn(
          { runId, url, attempt, status, error },
          'completion callback delivery failed for good',
        );
        await this.settle(delivery, null, durable);
        return;
      }
      const delay = Math.min(this.initialDelayMs * 2 ** (attempt - 1), this.maxDelayMs);
      due = Date.now() + delay;
      await this.settle(delivery, new Date(due), durable);
    }
    await this.settle(delivery, null, durable);
  }

  /**
   * One POST. `final`: the URL was refused for good (its host is not public), so retrying
   * cannot help; a host that does not resolve may be a passing DNS failure and is retried.
   */
  private async post(
    url: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number | null; error: string | null; final: boolean }> {
    if (!this.options.allowPrivateNetwork) {
      const refused = await refuseNonPublicHost(new URL(url));
      if (refused !== null) {
        return {
          status: null,
          error: `refused: ${refused.message}`,
          final: refused.kind === 'non-public',
        };
      }
    }
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.any([this.closing.signal, AbortSignal.timeout(this.timeoutMs)]),
      });
      await response.body?.cancel();
      return {
        status: response.status,
        error: response.ok ? null : `HTTP ${response.status}`,
        final: false,
      };
    } catch (caught) {
      const message = caught instanceof Error ? caught.message : String(caught);
      return { status: null, error: message.slice(0, CALLBACK_ERROR_MAX), final: false };
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
