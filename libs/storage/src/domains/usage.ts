import type {
  CostByModelRow,
  SessionUsage,
  SessionUsageReport,
  StatsQuery,
  UsageQuery,
  UsageStats,
} from '@cognition/contracts';
import type { Scope } from '../scope';

/**
 * Per-session usage records and the aggregates over them. The records are written by the run
 * store itself, in the same transaction as every run create/update (see `runContribution` in usage/contributions.ts),
 * so they never drift from the runs and concurrent runs add up exactly.
 */
export interface UsageStore {
  /** Totals and the per-model breakdown; null when missing or outside the caller's scope. */
  get(sessionId: string, scope: Scope): Promise<SessionUsageReport | null>;
  /**
   * Totals of many sessions at once (for session lists); sessions without runs are absent.
   * The caller has already checked scope (the ids come from a scoped read).
   */
  totals(sessionIds: readonly string[]): Promise<Map<string, SessionUsage>>;
  /**
   * Figures over the sessions in scope that match the filters, computed in the database;
   * `now` (default: the clock) decides which active sessions count as abandoned.
   */
  stats(query: StatsQuery, scope: Scope, now?: Date): Promise<UsageStats>;
  /** One row per provider/model over the matching sessions, most expensive first. */
  costByModel(query: UsageQuery, scope: Scope, now?: Date): Promise<CostByModelRow[]>;
}
