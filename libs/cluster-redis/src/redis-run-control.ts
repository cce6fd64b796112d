import type { CircuitBreaker } from '@cognition/circuit-breaker';
import type { CancelReason, Logger, RunControlChannel } from '@cognition/runtime';
import { InProcessRunControl } from '@cognition/runtime';
import type { Redis } from 'ioredis';
import { guarded } from './redis-connection';

export interface RedisRunControlOptions {
  redis: Redis;
  /** A separate connection in subscriber mode. */
  subscriber: Redis;
  nodeId: string;
  keyPrefix: string;
  breaker: CircuitBreaker;
  logger: Logger;
}

interface CancelMessage {
  runId: string;
  reason: CancelReason;
  from: string;
}

/**
 * Cancel requests across nodes: a run executing on this node is cancelled directly; any other
 * is published on `<prefix>control`, which every node subscribes to, and the node that
 * registered the run cancels it (pub/sub delivers in well under a second). While Redis is
 * unreachable a cancel for a run of another node fails with `UNAVAILABLE`.
 */
export class RedisRunControl implements RunControlChannel {
  private readonly local = new InProcessRunControl();
  private readonly channel: string;

  constructor(private readonly o: RedisRunControlOptions) {
    this.channel = `${o.keyPrefix}control`;
  }

  async start(): Promise<void> {
    this.o.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      try {
        const message = JSON.parse(text) as CancelMessage;
        if (message.from !== this.o.nodeId) void this.local.cancel(message.runId, message.reason);
      } catch (error) {
        this.o.logger.warn({ err: error }, 'unreadable cancel message');
      }
    });
    await this.o.subscriber.subscribe(this.channel);
  }

  listen(runId: string, onCancel: (reason: CancelReason) => void): () => void {
    return this.local.listen(runId, onCancel);
  }

  /** true when this node executes the run, or when at least one other node heard the request. */
  async cancel(runId: string, reason: CancelReason): Promise<boolean> {
    if (await this.local.cancel(runId, reason)) return true;
    const message: CancelMessage = { runId, reason, from: this.o.nodeId };
    const receivers = await guarded(this.o.breaker, 'cancel a run on another node', () =>
      this.o.redis.publish(this.channel, JSON.stringify(message)),
    );
    // This node's own subscription counts among the receivers.
    return receivers > 1;
  }
}
