import type { ModelCall } from './model';
import { answerOf, turnMessage } from './model';
import type { TurnRecord } from './turn-client';

/** What the chaos run checks once the faults are over, from the stored state and the model. */

type Json = Record<string, unknown>;

export interface StoredCounts {
  /** Acknowledged turns whose user message is not stored. */
  lostMessages: number;
  /** Turns whose user message is stored more than once. */
  duplicatedMessages: number;
  /** Turns with more than one run (one idempotency key, two runs). */
  duplicatedRuns: number;
  /** Turns whose answer is stored more than once. */
  duplicatedAnswers: number;
  /** Turns that ended `done` (or whose run completed) without their answer stored. */
  lostAnswers: number;
  /** Runs not in a terminal status once everything is back. */
  stuckRuns: number;
}

const TERMINAL_RUN = new Set(['completed', 'failed', 'aborted', 'interrupted']);

async function getJson(url: string, deadline: number): Promise<Json> {
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(15_000) });
      if (response.status === 200) return (await response.json()) as Json;
      if (Date.now() > deadline) throw new Error(`${url} answered ${response.status}`);
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function storedMessages(url: string, session: string, deadline: number): Promise<Json[]> {
  const all: Json[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await getJson(
      `${url}/sessions/${session}/messages?limit=500&order=asc&offset=${offset}`,
      deadline,
    );
    all.push(...((page['messages'] as Json[] | undefined) ?? []));
    if (page['has_more'] !== true) return all;
  }
}

/** Messages and runs as stored, per turn of `records`, read through the balancer. */
export async function checkStored(options: {
  url: string;
  sessions: readonly string[];
  records: readonly TurnRecord[];
  answerWords: number;
  deadline: number;
  problem(line: string): void;
}): Promise<StoredCounts> {
  const counts: StoredCounts = {
    lostMessages: 0,
    duplicatedMessages: 0,
    duplicatedRuns: 0,
    duplicatedAnswers: 0,
    lostAnswers: 0,
    stuckRuns: 0,
  };
  const bySession = new Map<string, TurnRecord[]>();
  for (const record of options.records) {
    bySession.set(record.session, [...(bySession.get(record.session) ?? []), record]);
  }
  for (const session of options.sessions) {
    const messages = await storedMessages(options.url, session, options.deadline);
    const runs = ((await getJson(`${options.url}/sessions/${session}/runs`, options.deadline))[
      'runs'
    ] ?? []) as Json[];
    const contents = new Map<string, number>();
    for (const m of messages) {
      const key = `${String(m['role'])}\u0000${String(m['content'])}`;
      contents.set(key, (contents.get(key) ?? 0) + 1);
    }
    for (const run of runs) {
      if (!TERMINAL_RUN.has(String(run['status']))) {
        counts.stuckRuns += 1;
        options.problem(`stuck run ${String(run['id'])} (${String(run['status'])}) of ${session}`);
      }
    }
    for (const record of bySession.get(session) ?? []) {
      const users = contents.get(`user\u0000${turnMessage(record.turn)}`) ?? 0;
      const answers =
        contents.get(`assistant\u0000${answerOf(record.turn, options.answerWords)}`) ?? 0;
      const own = runs.filter((run) => run['idempotency_key'] === record.turn);
      if (record.acknowledged && users === 0) {
        counts.lostMessages += 1;
        options.problem(`lost: the acknowledged message of ${record.turn} is not stored`);
      }
      if (users > 1) {
        counts.duplicatedMessages += 1;
        options.problem(`duplicated: the message of ${record.turn} is stored ${users} times`);
      }
      if (own.length > 1) {
        counts.duplicatedRuns += 1;
        options.problem(`duplicated: ${record.turn} has ${own.length} runs`);
      }
      if (answers > 1) {
        counts.duplicatedAnswers += 1;
        options.problem(`duplicated: the answer of ${record.turn} is stored ${answers} times`);
      }
      const completed =
        record.stream?.terminal?.event === 'done' || own.some((r) => r['status'] === 'completed');
      if (completed && answers === 0) {
        counts.lostAnswers += 1;
        options.problem(`lost: ${record.turn} completed without its answer stored`);
      }
    }
  }
  return counts;
}

/**
 * A claim of a run as the database recorded it (every claim increments `runs.lease_attempt`):
 * `turn` is the run's idempotency key, `at` the database's clock when the claim was written.
 */
export interface ClaimRecord {
  turn: string;
  claim: number;
  ownerNode: string;
  at: number;
}

/** `node-2` of the process `node-2#3`. */
function nodeOf(process: string): string {
  const hash = process.indexOf('#');
  return hash === -1 ? process : process.slice(0, hash);
}

/**
 * What is wrong with `call` given the run's claims written before it arrived: the claim it was
 * made under is its node's newest one before it (one process executes a run's steps one after
 * the other, which the overlap checks verify); that claim must be the run's newest then. A
 * node that re-claimed the run after another node's claim (A → B → A, B's work fenced off)
 * calls under the newer claim and is right to.
 */
function staleClaim(call: ModelCall, claims: readonly ClaimRecord[]): string | null {
  const before = claims.filter((c) => c.at <= call.receivedAt);
  const newest = before.at(-1);
  const node = nodeOf(call.process);
  const own = before.filter((c) => c.ownerNode === node).at(-1);
  if (!own) return `${call.process} called without a claim of the run`;
  if (newest && newest.claim !== own.claim) {
    return `${call.process} called under claim ${own.claim} after claim ${newest.claim} (${newest.ownerNode}) took the run over`;
  }
  return null;
}

/**
 * Turns whose run was executed twice at once: model calls of two node processes (or two of one
 * process) overlapping in time, or a call made under a claim that was no longer the run's
 * newest. With the claims the database recorded (`claims`, every claim of every run), the
 * latter is exact: a call counts when a newer claim was written before it arrived. Without
 * them (a turn with no claim recorded), a process calling again after another process called
 * counts, which also flags a legitimate hand-back (A → B → A with a newer claim).
 */
export function runsExecutedTwice(
  calls: readonly ModelCall[],
  problem: (line: string) => void,
  claims: readonly ClaimRecord[] = [],
): number {
  const byTurn = new Map<string, ModelCall[]>();
  for (const call of calls) byTurn.set(call.turn, [...(byTurn.get(call.turn) ?? []), call]);
  const claimsByTurn = new Map<string, ClaimRecord[]>();
  for (const claim of claims) {
    claimsByTurn.set(claim.turn, [...(claimsByTurn.get(claim.turn) ?? []), claim]);
  }
  let twice = 0;
  for (const [turn, list] of byTurn) {
    const sorted = [...list].sort((a, b) => a.receivedAt - b.receivedAt);
    const turnClaims = [...(claimsByTurn.get(turn) ?? [])].sort(
      (a, b) => a.at - b.at || a.claim - b.claim,
    );
    const finished = new Set<string>();
    let found: string | null = null;
    sorted.forEach((call, j) => {
      if (found) return;
      if (turnClaims.length > 0) {
        found = staleClaim(call, turnClaims);
        if (found) return;
      } else if (finished.has(call.process)) {
        found = `${call.process} called again after another process took the run over`;
        return;
      }
      for (const earlier of sorted.slice(0, j)) {
        const overlaps = (earlier.endedAt ?? Number.POSITIVE_INFINITY) > call.receivedAt;
        if (earlier.process === call.process) {
          // One run's steps are sequential: two calls at once are two executions in one process.
          if (overlaps) {
            found = `${call.process} called the model twice at once`;
            return;
          }
          continue;
        }
        finished.add(earlier.process);
        if (overlaps) {
          found = `${earlier.process} and ${call.process} called the model at once`;
          return;
        }
      }
    });
    if (found) {
      twice += 1;
      const claimed = turnClaims.map((c) => `claim ${c.claim} ${c.ownerNode} ${c.at}`);
      problem(
        `two nodes at once: ${turn}: ${String(found)} (${[
          ...sorted.map((c) => `${c.process} ${c.kind} ${c.receivedAt}-${c.endedAt ?? 'open'}`),
          ...claimed,
        ].join(', ')})`,
      );
    }
  }
  return twice;
}
