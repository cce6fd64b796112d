import { IdSchema } from '@cognition/contracts';
import { z } from 'zod';
import { Timestamp } from './common';

/* `/health` and `/ready`. */

const BreakerSnapshotBody = z
  .object({
    state: z.enum(['closed', 'open', 'half_open']),
    total_calls: z.number().int().optional(),
    failed_calls: z.number().int().optional(),
    rejected_calls: z.number().int().optional(),
    consecutive_failures: z.number().int().optional(),
    opened_at: Timestamp.nullable().optional(),
  })
  .meta({ id: 'CircuitBreakerSnapshot' });

const StorageHealthBody = z
  .object({
    backend: z.enum(['memory', 'sqlite', 'postgres']),
    ok: z.boolean(),
    latency_ms: z.number(),
    pool: z
      .object({ size: z.number().int(), idle: z.number().int(), waiting: z.number().int() })
      .optional(),
    error: z.string().optional(),
  })
  .meta({ id: 'StorageHealth' });

export const HealthBody = z
  .object({
    status: z.enum(['healthy', 'degraded']),
    version: z.string(),
    active_sessions: z.number().int().min(0).nullable().meta({
      description:
        "Active sessions within the caller's scope; null when scoping is enabled and the caller sent no scope.",
    }),
    runs: z
      .object({
        executing: z.number().int().min(0),
        queued: z.number().int().min(0),
        limit: z.number().int().min(1),
      })
      .nullable()
      .meta({
        description:
          'Runs of this process: executing, waiting for a slot (`queued`), and the limit (COGNITION_MAX_CONCURRENT_RUNS); null for callers that did not identify themselves.',
      }),
    storage: StorageHealthBody,
    circuit_breakers: z.record(z.string(), BreakerSnapshotBody).meta({
      description: 'Breakers keyed by name (e.g. `llm:openai`), as the original API reports them',
    }),
    node: z
      .object({
        id: z.string().nullable().meta({ description: 'COGNITION_NODE_ID; null on one node' }),
        owned_runs: z.array(IdSchema).meta({ description: 'Runs this node executes' }),
        redis: z
          .object({
            status: z.string(),
            ok: z.boolean(),
            latency_ms: z.number().nullable(),
            error: z.string().optional(),
          })
          .nullable()
          .meta({ description: 'null on one node (no COGNITION_REDIS_URL)' }),
      })
      .nullable()
      .meta({ description: 'null for callers that did not identify themselves' }),
  })
  .meta({ id: 'Health' });

export const ReadyBody = z.object({ ready: z.boolean() }).meta({ id: 'Ready' });

export type HealthBodyT = z.infer<typeof HealthBody>;
