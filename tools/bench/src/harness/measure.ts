import { performance } from 'node:perf_hooks';

/** A function under measurement; `i` is the 0-based index of the call (warm-up calls included). */
export type Operation = (i: number) => Promise<unknown>;

/** One empty list of figures per contender. */
function figuresPer<K extends string>(names: readonly K[]): Record<K, number[]> {
  return Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
}

/**
 * The contenders in the order they take turn `turn`: rotated by one each turn, so none always
 * goes first (and none always runs right after the same neighbour).
 */
function inTurn<K extends string>(names: readonly K[], turn: number): K[] {
  return names.map((_, k) => names[(turn + k) % names.length] as K);
}

export interface LatencyPlan {
  /** Untimed calls per contender first (JIT, caches, connections). */
  warmup: number;
  /** Timed calls per contender. */
  samples: number;
  /**
   * Fewer timed calls for some contenders (slow peers), spread evenly over the `samples`
   * rounds so they still share the others' conditions; their calls are numbered
   * `warmup`, `warmup + 1`, ... like everyone's.
   */
  fewer?: Partial<Record<string, number>>;
}

/** Whether a contender with `n` of `total` timed calls takes one in round `round`. */
function takesRound(n: number, total: number, round: number): boolean {
  return Math.floor(((round + 1) * n) / total) > Math.floor((round * n) / total);
}

/**
 * Latency samples (ms) per contender. The contenders take turns call by call (in an order that
 * rotates every sample), so a load spike on this shared machine hits them all alike instead of
 * whichever happened to run during it; one with `fewer` samples sits some rounds out.
 */
export async function sampleLatencies<K extends string>(
  contenders: Record<K, Operation>,
  plan: LatencyPlan,
): Promise<Record<K, number[]>> {
  const names = Object.keys(contenders) as K[];
  const results = figuresPer(names);
  for (let i = 0; i < plan.warmup; i += 1) {
    for (const name of names) await contenders[name](i);
  }
  for (let s = 0; s < plan.samples; s += 1) {
    for (const name of inTurn(names, s)) {
      const n = Math.min(plan.fewer?.[name] ?? plan.samples, plan.samples);
      if (!takesRound(n, plan.samples, s)) continue;
      const started = performance.now();
      await contenders[name](plan.warmup + results[name].length);
      results[name].push(performance.now() - started);
    }
  }
  return results;
}

export interface ThroughputPlan {
  /** Untimed operations per contender first. */
  warmupOps: number;
  /** Timed rounds; contenders alternate round by round. */
  rounds: number;
  /** Operations per contender per round, run back to back by one caller. */
  opsPerRound: number;
}

/**
 * Operations per second per contender, one figure per round. Each round runs `opsPerRound`
 * sequential calls of every contender in turn (rotating who goes first); the median over rounds
 * is robust to the rounds a neighbour's load spike spoiled.
 */
export async function sampleThroughput<K extends string>(
  contenders: Record<K, Operation>,
  plan: ThroughputPlan,
): Promise<Record<K, number[]>> {
  const names = Object.keys(contenders) as K[];
  const rates = figuresPer(names);
  const next = Object.fromEntries(names.map((name) => [name, 0])) as Record<K, number>;
  for (const name of names) {
    for (let i = 0; i < plan.warmupOps; i += 1) await contenders[name](next[name]++);
  }
  for (let round = 0; round < plan.rounds; round += 1) {
    for (const name of inTurn(names, round)) {
      const started = performance.now();
      for (let i = 0; i < plan.opsPerRound; i += 1) await contenders[name](next[name]++);
      rates[name].push((plan.opsPerRound * 1000) / (performance.now() - started));
    }
  }
  return rates;
}

/** Runs `fn` and returns its result with the elapsed ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}
