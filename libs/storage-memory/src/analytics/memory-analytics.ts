import type {
  CostByModelRow,
  FeedbackInput,
  Message,
  MessageFeedback,
  Run,
  Session,
  SessionUsage,
  SessionUsageReport,
  StatsQuery,
  StatsStatus,
  UsageQuery,
  UsageStats,
} from '@cognition/contracts';
import {
  readStatusOf,
  EMPTY_SESSION_USAGE,
  FeedbackInputSchema,
  IdSchema,
  StatsQuerySchema,
  StringMapSchema,
  UsageQuerySchema,
} from '@cognition/contracts';
import type {
  FeedbackStore,
  FigureRow,
  ModelContribution,
  RunContribution,
  Scope,
  SearchStore,
  UsageStore,
  UsageTotals,
} from '@cognition/storage';
import {
  addModelFigures,
  bucketStart,
  contributionDelta,
  costByModelRows,
  figureTotalsOf,
  metadataMatches,
  parseInput,
  runContribution,
  runTimes,
  scopeMatches,
  sessionModelRows,
  sessionUsageOf,
  StorageError,
  usageStatsOf,
} from '@cognition/storage';
import { clone } from '../clone';
import { searchMessages } from './memory-search';

interface UsageRecord {
  totals: UsageTotals;
  models: Map<string, ModelContribution>;
  feedbackCount: number;
  feedbackScoreSum: number;
}

/** What the analytics read from the rest of the memory backend. */
export interface MemoryAnalyticsDeps {
  sessions: () => Iterable<Session>;
  session: (id: string) => Session | undefined;
  messages: (sessionId: string) => readonly Message[];
  now: () => Date;
}

const AnyIds = IdSchema.array();

/**
 * Usage records, feedback and search of the memory backend. Like the rest of the backend, every
 * method checks and writes without an `await` in between (the atomicity a transaction gives).
 */
export class MemoryAnalytics {
  private readonly usageBySession = new Map<string, UsageRecord>();
  /** sessionId -> messageId -> feedback. */
  private readonly feedbackBySession = new Map<string, Map<string, MessageFeedback>>();
  readonly usage: UsageStore;
  readonly feedback: FeedbackStore;
  readonly search: SearchStore;

  constructor(private readonly deps: MemoryAnalyticsDeps) {
    this.usage = {
      get: (id, scope) => wrap(() => this.report(id, scope)),
      totals: (ids) => wrap(() => this.totals(ids)),
      stats: (query, scope, now) => wrap(() => this.stats(query, scope, now ?? deps.now())),
      costByModel: (query, scope, now) =>
        wrap(() => this.costByModel(query, scope, now ?? deps.now())),
    };
    this.feedback = {
      set: (sessionId, messageId, input, scope) =>
        wrap(() => this.setFeedback(sessionId, messageId, input, scope)),
      delete: (sessionId, messageId, scope) =>
        wrap(() => this.deleteFeedback(sessionId, messageId, scope)),
      forMessages: (sessionId, ids) => wrap(() => this.feedbackOf(sessionId, ids)),
    };
    this.search = {
      search: (query, scope) =>
        wrap(() => searchMessages(deps.sessions(), deps.messages, query, scope)),
    };
  }

  /** Applies a run write (before: null for a create) to the session's records. */
  recordRun(before: Run | null, after: Run): void {
    const delta = contributionDelta(runContribution(before), runContribution(after));
    const record = this.recordOf(after.sessionId);
    applyDelta(record, delta);
    const times = runTimes(after);
    const t = record.totals;
    if (!t.startedAt || times.startedAt < t.startedAt) t.startedAt = times.startedAt;
    if (!t.lastActivityAt || times.activityAt > t.lastActivityAt)
      t.lastActivityAt = times.activityAt;
    t.endedAt = times.endedAt;
    if (times.lastModel) {
      t.lastModel = times.lastModel.model;
      t.lastProvider = times.lastModel.provider;
    }
  }

  deleteSession(sessionId: string): void {
    this.usageBySession.delete(sessionId);
    this.feedbackBySession.delete(sessionId);
  }

  private recordOf(sessionId: string): UsageRecord {
    let record = this.usageBySession.get(sessionId);
    if (!record) {
      const { costComplete: _c, ...rest } = EMPTY_SESSION_USAGE;
      record = {
        totals: { ...rest, unpricedCalls: 0 },
        models: new Map(),
        feedbackCount: 0,
        feedbackScoreSum: 0,
      };
      this.usageBySession.set(sessionId, record);
    }
    return record;
  }

  private visible(id: string, scope: Scope): Session | undefined {
    const session = this.deps.session(id);
    const callerScope = parseInput(StringMapSchema, scope, 'scope');
    return session && scopeMatches(callerScope, session.scopes) ? session : undefined;
  }

  private report(id: string, scope: Scope): SessionUsageReport | null {
    if (!this.visible(id, scope)) return null;
    const record = this.usageBySession.get(id);
    return {
      sessionId: id,
      usage: record ? toUsage(record) : { ...EMPTY_SESSION_USAGE },
      models: record ? sessionModelRows(record.models.values()) : [],
    };
  }

  private totals(ids: readonly string[]): Map<string, SessionUsage> {
    const out = new Map<string, SessionUsage>();
    for (const id of parseInput(AnyIds, ids, 'session ids')) {
      const record = this.usageBySession.get(id);
      if (record) out.set(id, toUsage(record));
    }
    return out;
  }

  private matching(
    q: {
      from?: Date | undefined;
      to?: Date | undefined;
      status?: StatsStatus | undefined;
      agentName?: string | undefined;
      metadata?: Record<string, string> | undefined;
      abandonAfterSeconds: number;
    },
    scope: Scope,
    now: Date,
  ): { session: Session; status: StatsStatus }[] {
    const callerScope = parseInput(StringMapSchema, scope, 'scope');
    const out: { session: Session; status: StatsStatus }[] = [];
    for (const session of this.deps.sessions()) {
      if (!scopeMatches(callerScope, session.scopes)) continue;
      if (!metadataMatches(q.metadata, session.metadata)) continue;
      if (q.agentName !== undefined && session.agentName !== q.agentName) continue;
      if (q.from && session.createdAt < q.from) continue;
      if (q.to && session.createdAt >= q.to) continue;
      // The sessions' own read rule, so stats and lists agree on who is abandoned.
      const status: StatsStatus = readStatusOf(session, now, q.abandonAfterSeconds);
      if (q.status !== undefined && status !== q.status) continue;
      out.push({ session, status });
    }
    return out;
  }

  private stats(query: StatsQuery, scope: Scope, now: Date): UsageStats {
    const q = parseInput(StatsQuerySchema, query, 'stats query');
    const groups = this.matching(q, scope, now).map(({ session, status }) => ({
      totals: figureTotalsOf(this.figureRow(session.id, status)),
      start: q.bucket ? bucketStart(session.createdAt, q.bucket) : null,
    }));
    return usageStatsOf(groups, q.bucket !== undefined);
  }

  private figureRow(sessionId: string, status: StatsStatus): FigureRow {
    const record = this.usageBySession.get(sessionId);
    const t = record?.totals;
    return {
      status,
      sessions: 1,
      runs: t?.runs ?? 0,
      failed: t?.errorCount ?? 0,
      aborted: t?.abortedCount ?? 0,
      tokensIn: t?.tokensIn ?? 0,
      tokensOut: t?.tokensOut ?? 0,
      estimatedTokensIn: t?.estimatedTokensIn ?? 0,
      estimatedTokensOut: t?.estimatedTokensOut ?? 0,
      costUsd: t?.costUsd ?? 0,
      unpricedCalls: t?.unpricedCalls ?? 0,
      feedbackCount: record?.feedbackCount ?? 0,
      feedbackScoreSum: record?.feedbackScoreSum ?? 0,
    };
  }

  private costByModel(query: UsageQuery, scope: Scope, now: Date): CostByModelRow[] {
    const q = parseInput(UsageQuerySchema, query, 'cost-by-model query');
    const models = new Map<string, ModelContribution>();
    for (const { session } of this.matching(q, scope, now)) {
      for (const m of this.usageBySession.get(session.id)?.models.values() ?? []) {
        addModelFigures(models, m);
      }
    }
    return costByModelRows(models.values());
  }

  // Feedback

  private setFeedback(
    sessionId: string,
    messageId: string,
    input: FeedbackInput,
    scope: Scope,
  ): MessageFeedback {
    const data = parseInput(FeedbackInputSchema, input, 'feedback');
    if (!this.visible(sessionId, scope)) throw StorageError.sessionNotFound(sessionId);
    requireAssistant(this.deps.messages(sessionId), messageId);
    const bySession = this.feedbackBySession.get(sessionId) ?? new Map<string, MessageFeedback>();
    const previous = bySession.get(messageId);
    const now = this.deps.now();
    const feedback: MessageFeedback = {
      score: data.score,
      text: data.text ?? null,
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
    };
    bySession.set(messageId, feedback);
    this.feedbackBySession.set(sessionId, bySession);
    const record = this.recordOf(sessionId);
    record.feedbackCount += previous ? 0 : 1;
    record.feedbackScoreSum += feedback.score - (previous?.score ?? 0);
    return clone(feedback);
  }

  private deleteFeedback(sessionId: string, messageId: string, scope: Scope): boolean {
    if (!this.visible(sessionId, scope)) throw StorageError.sessionNotFound(sessionId);
    const bySession = this.feedbackBySession.get(sessionId);
    const previous = bySession?.get(messageId);
    if (!bySession || !previous) return false;
    bySession.delete(messageId);
    const record = this.recordOf(sessionId);
    record.feedbackCount -= 1;
    record.feedbackScoreSum -= previous.score;
    return true;
  }

  private feedbackOf(sessionId: string, ids: readonly string[]): Map<string, MessageFeedback> {
    const bySession = this.feedbackBySession.get(sessionId);
    const out = new Map<string, MessageFeedback>();
    for (const id of ids) {
      const feedback = bySession?.get(id);
      if (feedback) out.set(id, clone(feedback));
    }
    return out;
  }
}

function requireAssistant(messages: readonly Message[], messageId: string): void {
  const message = messages.find((candidate) => candidate.id === messageId);
  if (!message) throw new StorageError('MESSAGE_NOT_FOUND', `Message not found: ${messageId}`);
  if (message.role !== 'assistant') throw notAssistant(message);
}

export function notAssistant(message: { id: string; role: string }): StorageError {
  return new StorageError(
    'VALIDATION_ERROR',
    `Feedback is for assistant messages; ${message.id} is a ${message.role} message`,
    {
      issues: [
        { path: 'messageId', message: `is a ${message.role} message, not an assistant message` },
      ],
    },
  );
}

function applyDelta(record: UsageRecord, delta: RunContribution): void {
  const t = record.totals;
  t.runs += delta.runs;
  t.errorCount += delta.errors;
  t.abortedCount += delta.aborted;
  t.tokensIn += delta.tokensIn;
  t.tokensOut += delta.tokensOut;
  t.estimatedTokensIn += delta.estimatedTokensIn;
  t.estimatedTokensOut += delta.estimatedTokensOut;
  t.costUsd += delta.costUsd;
  t.unpricedCalls += delta.unpricedCalls;
  for (const m of delta.models.values()) addModelFigures(record.models, m);
}

function toUsage(record: UsageRecord): SessionUsage {
  return clone(sessionUsageOf(record.totals));
}

function wrap<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
