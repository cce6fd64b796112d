import type { ClaimRecord } from './checks';

/** The faults of a chaos run: when, which, and carrying them out against the caller's cluster. */

export type FaultKind = 'kill' | 'term' | 'redis' | 'postgres';

/** What the chaos run may do to the cluster (the caller knows how: processes of its own). */
export interface ChaosCluster {
  /** The balancer: what every client uses. */
  url: string;
  size: number;
  /** SIGKILL (`kill`) or SIGTERM (`term`, a graceful hand-over) node `index`; resolves once it exited. */
  stopNode(index: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts node `index` again; rejects when it did not come up (e.g. the database is down). */
  startNode(index: number): Promise<void>;
  stopRedis(): Promise<void>;
  startRedis(): Promise<void>;
  stopPostgres(): Promise<void>;
  startPostgres(): Promise<void>;
  /**
   * Every claim of every run so far, as the database recorded it (`ClaimRecord`); when given,
   * the check of model calls judges each call by its claim instead of by its process.
   */
  claims?(): Promise<ClaimRecord[]>;
}

/** mulberry32: a small seeded generator, so a seed replays the same schedule. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface PlannedFault {
  kind: FaultKind;
  /** ms after the load started. */
  at: number;
  /** How long the victim stays down, ms. */
  downMs: number;
}

export interface FaultRecord extends PlannedFault {
  /** `node-2`, `redis`, `postgres`; null when no node could be taken down (then not injected). */
  target: string | null;
  /** How long a node fault waited for a second node to be up (none: on time). */
  delayedMs?: number;
  /** ms after the load started when the victim was down (its stop resolved: a node exited). */
  downAt: number | null;
  /** ms after the load started when the victim was back (null: never, see `error`). */
  backAt: number | null;
  error?: string;
}

/**
 * `count` faults at seeded random times within the first 85 % of `windowMs` (the rest lets the
 * last of them recover under load); every kind once before any repeats, then kills most often.
 */
export function planFaults(random: () => number, count: number, windowMs: number): PlannedFault[] {
  const kinds: FaultKind[] = ['kill', 'term', 'redis', 'postgres'];
  for (let i = kinds.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j] as FaultKind, kinds[i] as FaultKind];
  }
  const weighted: FaultKind[] = ['kill', 'kill', 'kill', 'term', 'term', 'redis', 'postgres'];
  const plan: PlannedFault[] = [];
  for (let i = 0; i < count; i += 1) {
    const kind = kinds[i] ?? weighted[Math.floor(random() * weighted.length)] ?? 'kill';
    plan.push({
      kind,
      at: Math.round((0.05 + random() * 0.8) * windowMs),
      downMs: Math.round(300 + random() * 1700),
    });
  }
  return plan.sort((x, y) => x.at - y.at);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries `start` (a node cannot start while PostgreSQL is down) until it works or `until`. */
async function startAgain(start: () => Promise<void>, until: number): Promise<void> {
  for (;;) {
    try {
      await start();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await pause(500);
    }
  }
}

/**
 * Carries out `plan` from `startedAt` on: each fault at its time, overlapping others, never two
 * at once on one victim, and never the last node standing (a node fault then takes another
 * node, or waits). Resolves once every victim is back.
 */
export async function injectFaults(options: {
  cluster: ChaosCluster;
  plan: PlannedFault[];
  random: () => number;
  startedAt: number;
  /** Give up restarting a victim after this long (ms), recording the error. */
  recoverWithinMs: number;
  log(line: string): void;
}): Promise<FaultRecord[]> {
  const { cluster, random, startedAt } = options;
  const down = new Set<string>();
  const busy = new Map<string, Promise<void>>();
  const records: FaultRecord[] = [];
  const since = () => Date.now() - startedAt;

  const one = async (planned: PlannedFault): Promise<void> => {
    await pause(Math.max(0, startedAt + planned.at - Date.now()));
    const record: FaultRecord = { ...planned, target: null, downAt: null, backAt: null };
    records.push(record);
    let target: string;
    let stop: () => Promise<void>;
    let start: () => Promise<void>;
    if (planned.kind === 'kill' || planned.kind === 'term') {
      const upNodes = () =>
        Array.from({ length: cluster.size }, (_, i) => i).filter((i) => !down.has(`node-${i + 1}`));
      // Never the last node standing: the fault waits for another node to be back (on a
      // starved machine a node takes many seconds to start), so the run still gets its faults.
      const waitUntil = Date.now() + options.recoverWithinMs;
      while (upNodes().length < 2 && Date.now() < waitUntil) await pause(250);
      const up = upNodes();
      if (up.length < 2) {
        record.error = 'no node to take down (only one up)';
        return;
      }
      const late = since() - planned.at;
      if (late > 500) record.delayedMs = late;
      const index = up[Math.floor(random() * up.length)] as number;
      target = `node-${index + 1}`;
      const signal = planned.kind === 'kill' ? 'SIGKILL' : 'SIGTERM';
      stop = () => cluster.stopNode(index, signal);
      start = () => cluster.startNode(index);
    } else {
      target = planned.kind;
      stop = planned.kind === 'redis' ? () => cluster.stopRedis() : () => cluster.stopPostgres();
      start = planned.kind === 'redis' ? () => cluster.startRedis() : () => cluster.startPostgres();
    }
    record.target = target;
    down.add(target);
    const previous = busy.get(target) ?? Promise.resolve();
    const done = previous.then(async () => {
      options.log(`fault at ${since()} ms: ${planned.kind} ${target}, down ${planned.downMs} ms`);
      await stop();
      // Stopping (a SIGTERM's drain) and starting again are told apart in the report.
      record.downAt = since();
      await pause(planned.downMs);
      try {
        await startAgain(start, Date.now() + options.recoverWithinMs);
        record.backAt = since();
        options.log(`fault: ${target} back at ${record.backAt} ms`);
      } catch (error) {
        record.error = `did not come back: ${error instanceof Error ? error.message.slice(0, 500) : String(error)}`;
      } finally {
        down.delete(target);
      }
    });
    busy.set(target, done);
    await done;
  };

  await Promise.all(options.plan.map(one));
  return records.sort((x, y) => x.at - y.at);
}
