import type { StoredCounts } from './checks';
import { checkStored, runsExecutedTwice } from './checks';
import type { ChaosCluster, FaultRecord } from './faults';
import { injectFaults, planFaults, seededRandom } from './faults';
import type { ChaosModel } from './model';
import type { TurnRecord } from './turn-client';
import { runTurn } from './turn-client';

export interface ChaosOptions {
  cluster: ChaosCluster;
  model: ChaosModel;
  /** Replays the same fault schedule (kinds, times, victims, pauses). */
  seed: number;
  /** Sessions sending turns at once, each one turn after the other. */
  sessions: number;
  /** Turns to send at least; the load also goes on until every fault is over. */
  turns: number;
  faults: number;
  /** The window the faults are spread over, ms after the load started. */
  faultWindowMs: number;
  /** How long one turn may take, faults included, before its stream counts as stuck. */
  turnTimeoutMs: number;
  log(line: string): void;
}

/** The counts a chaos run reports; every column but turns, completed, failed and faults should be 0. */
export interface ChaosReport extends StoredCounts {
  seed: number;
  /** Turns sent (each with its own idempotency key). */
  turns: number;
  completed: number;
  /** Turns that ended with an `error` event, by code. */
  failed: Record<string, number>;
  /** Faults carried out (their victims back up). */
  faultsInjected: number;
  faultsByKind: Record<string, number>;
  /** Turns never acknowledged before their deadline. */
  unacknowledged: number;
  /** Streams that did not reach their terminal event before their deadline. */
  stuckStreams: number;
  streamGaps: number;
  streamDuplicates: number;
  /** Streams whose rebuilt text or stored answer differs from what the model sent. */
  wrongText: number;
  /** Turns whose run two node processes executed at once. */
  executedTwice: number;
  /** Sessions that did not take a new message (to `done`) after the faults. */
  refusedAfter: number;
  /** Faults whose victim did not come back. */
  faultsFailed: number;
  reconnects: number;
  /** Non-200 answers and reset connections the clients met (sends and reconnections). */
  refusals: Record<string, number>;
  durationMs: number;
  faults: FaultRecord[];
  /** One line per violation found (for a failing test or a bench note). */
  problems: string[];
}

/** The columns that must be 0. */
export function violations(report: ChaosReport): Record<string, number> {
  return {
    lostMessages: report.lostMessages,
    duplicatedMessages: report.duplicatedMessages,
    duplicatedRuns: report.duplicatedRuns,
    duplicatedAnswers: report.duplicatedAnswers,
    lostAnswers: report.lostAnswers,
    stuckRuns: report.stuckRuns,
    unacknowledged: report.unacknowledged,
    stuckStreams: report.stuckStreams,
    streamGaps: report.streamGaps,
    streamDuplicates: report.streamDuplicates,
    wrongText: report.wrongText,
    executedTwice: report.executedTwice,
    refusedAfter: report.refusedAfter,
    faultsFailed: report.faultsFailed,
  };
}

function tally(into: Record<string, number>, key: string, n = 1): void {
  into[key] = (into[key] ?? 0) + n;
}

async function createSession(url: string, deadline: number): Promise<string> {
  for (;;) {
    try {
      const response = await fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      if (response.status === 201) return String(((await response.json()) as { id: unknown }).id);
      if (Date.now() > deadline) throw new Error(`POST /sessions answered ${response.status}`);
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The chaos run (issue 31): `sessions` clients send turns through the balancer (a tool call,
 * then a streamed answer) while seeded faults hit the cluster — kill -9 and SIGTERM of nodes,
 * Redis and PostgreSQL restarts, overlapping — then every check of the report runs on what the
 * clients saw, what is stored and what the model was asked.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { cluster, log } = options;
  const random = seededRandom(options.seed);
  const plan = planFaults(random, options.faults, options.faultWindowMs);
  const answerWords = options.model.answerWords;
  const problems: string[] = [];
  const problem = (line: string) => problems.push(line);
  log(
    `chaos seed ${options.seed}: ${options.sessions} sessions, ≥ ${options.turns} turns, ${plan.length} faults`,
  );

  const sessions: string[] = [];
  for (let i = 0; i < options.sessions; i += 1) {
    sessions.push(await createSession(cluster.url, Date.now() + 30_000));
  }
  const startedAt = Date.now();
  let faultsOver = false;
  const faults = injectFaults({
    cluster,
    plan,
    random,
    startedAt,
    // Generous: on a starved machine a node takes a minute to start; one given up stays down.
    recoverWithinMs: 180_000,
    log,
  }).finally(() => {
    faultsOver = true;
  });
  const records: TurnRecord[] = [];
  let sent = 0;
  await Promise.all(
    sessions.map(async (session, s) => {
      for (let n = 1; sent < options.turns || !faultsOver; n += 1) {
        sent += 1;
        const record = await runTurn({
          url: cluster.url,
          session,
          turn: `s${s + 1}-t${n}-${options.seed}`,
          answerWords,
          deadline: Date.now() + options.turnTimeoutMs,
        });
        records.push(record);
        if (records.length % 100 === 0)
          log(`${records.length} turns, ${Date.now() - startedAt} ms`);
      }
    }),
  );
  const faultRecords = await faults;
  const durationMs = Date.now() - startedAt;

  const report: ChaosReport = {
    seed: options.seed,
    turns: records.length,
    completed: 0,
    failed: {},
    faultsInjected: faultRecords.filter((f) => f.target !== null && !f.error).length,
    faultsByKind: {},
    unacknowledged: 0,
    stuckStreams: 0,
    streamGaps: 0,
    streamDuplicates: 0,
    wrongText: 0,
    executedTwice: 0,
    refusedAfter: 0,
    faultsFailed: faultRecords.filter((f) => f.target !== null && f.error).length,
    reconnects: 0,
    refusals: {},
    durationMs,
    faults: faultRecords,
    problems,
    lostMessages: 0,
    duplicatedMessages: 0,
    duplicatedRuns: 0,
    duplicatedAnswers: 0,
    lostAnswers: 0,
    stuckRuns: 0,
  };
  for (const f of faultRecords) {
    if (f.target !== null && !f.error) tally(report.faultsByKind, f.kind);
    if (f.error && f.target !== null)
      problem(`fault ${f.kind} ${f.target} at ${f.at} ms: ${f.error}`);
  }
  for (const record of records) {
    report.reconnects += record.reconnects;
    for (const [what, n] of Object.entries(record.refusals)) tally(report.refusals, what, n);
    const terminal = record.stream?.terminal;
    if (!record.acknowledged) {
      report.unacknowledged += 1;
      problem(`unacknowledged: ${record.turn} (${JSON.stringify(record.refusals)})`);
    } else if (record.stuck) {
      report.stuckStreams += 1;
      problem(
        `stuck stream: ${record.turn} run ${String(record.runId)} last ${String(record.stream?.lastId)}`,
      );
    }
    if (terminal?.event === 'done') report.completed += 1;
    if (terminal?.event === 'error') tally(report.failed, String(terminal.data['code']));
    const kinds = new Set(record.stream?.problems.map((p) => p.kind) ?? []);
    if (kinds.has('gap')) report.streamGaps += 1;
    if (kinds.has('duplicate') || kinds.has('after-terminal')) report.streamDuplicates += 1;
    if (kinds.has('wrong-text')) report.wrongText += 1;
    for (const p of record.stream?.problems ?? []) {
      problem(`stream ${p.kind}: ${record.turn} run ${String(record.runId)}: ${p.detail}`);
    }
  }

  // Everything is back: the stored state and one more turn per session.
  const deadline = Date.now() + 60_000;
  Object.assign(
    report,
    await checkStored({ url: cluster.url, sessions, records, answerWords, deadline, problem }),
  );
  report.executedTwice = runsExecutedTwice(
    options.model.calls(),
    problem,
    (await cluster.claims?.()) ?? [],
  );
  const after = await Promise.all(
    sessions.map((session, s) =>
      runTurn({
        url: cluster.url,
        session,
        turn: `s${s + 1}-after-${options.seed}`,
        answerWords,
        deadline: Date.now() + 60_000,
      }),
    ),
  );
  for (const record of after) {
    const ok = record.stream?.terminal?.event === 'done' && record.stream.problems.length === 0;
    if (!ok) {
      report.refusedAfter += 1;
      problem(
        `refused after: ${record.turn}: ${record.stream?.terminal?.event ?? 'no terminal'} ${JSON.stringify(record.refusals)}`,
      );
    }
  }
  return report;
}
