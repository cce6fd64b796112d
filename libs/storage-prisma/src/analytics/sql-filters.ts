import type { StatsStatus, StringMap } from '@cognition/contracts';
import type { DatabaseProvider } from '../db/migrate';

/**
 * A raw SQL statement under construction: text with positional placeholders of the provider
 * (`$n` on PostgreSQL, `?` on SQLite) and its parameters, in order.
 */
export class SqlBuilder {
  readonly params: unknown[] = [];
  constructor(readonly provider: DatabaseProvider) {}

  /** Adds a parameter and returns its placeholder. */
  param(value: unknown): string {
    this.params.push(value);
    return this.provider === 'sqlite' ? '?' : `$${this.params.length}`;
  }

  /**
   * A timestamp parameter compared with DateTime columns: SQLite stores them as ISO-8601 text
   * with `+00:00` (what Prisma's adapter writes), PostgreSQL as `timestamp(3)` in UTC.
   */
  time(value: Date): string {
    if (this.provider === 'sqlite') return this.param(value.toISOString().replace('Z', '+00:00'));
    return `CAST(${this.param(value.toISOString().replace('Z', ''))} AS timestamp(3))`;
  }
}

export interface SessionFilter {
  from?: Date | undefined;
  to?: Date | undefined;
  status?: StatsStatus | undefined;
  agentName?: string | undefined;
  metadata?: StringMap | undefined;
  abandonAfterSeconds: number;
}

/**
 * Whether session `s` counts under `status`, by the sessions' own read rule (`readStatusOf` in
 * @cognition/contracts): `abandoned` for active sessions whose `last_activity_at` is at or
 * before `idleSince`, `active` for the other active ones, the stored status otherwise.
 */
export function statusCondition(sql: SqlBuilder, status: StatsStatus, idleSince: Date): string {
  switch (status) {
    case 'abandoned':
      return `s.status = 'active' AND s.last_activity_at <= ${sql.time(idleSince)}`;
    case 'active':
      return `s.status = 'active' AND s.last_activity_at > ${sql.time(idleSince)}`;
    case 'suspended':
    case 'completed':
    case 'failed':
    case 'error':
      return `s.status = ${sql.param(status)}`;
  }
}

/**
 * WHERE conditions over sessions `s` (and usage rows `u` for the status filter): the caller's
 * scope and metadata as EXISTS over the key/value tables (indexed on key, value), creation
 * time, agent, status.
 */
export function sessionConditions(
  sql: SqlBuilder,
  scope: StringMap,
  filter: SessionFilter,
  now: Date,
): string[] {
  const conditions: string[] = [];
  for (const [key, value] of Object.entries(scope)) {
    conditions.push(
      `EXISTS (SELECT 1 FROM session_scopes sc WHERE sc.session_id = s.id AND sc.key = ${sql.param(key)} AND sc.value = ${sql.param(value)})`,
    );
  }
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    conditions.push(
      `EXISTS (SELECT 1 FROM session_metadata sm WHERE sm.session_id = s.id AND sm.key = ${sql.param(key)} AND sm.value = ${sql.param(value)})`,
    );
  }
  if (filter.from) conditions.push(`s.created_at >= ${sql.time(filter.from)}`);
  if (filter.to) conditions.push(`s.created_at < ${sql.time(filter.to)}`);
  if (filter.agentName !== undefined)
    conditions.push(`s.agent_name = ${sql.param(filter.agentName)}`);
  if (filter.status !== undefined) {
    const idleSince = new Date(now.getTime() - filter.abandonAfterSeconds * 1000);
    conditions.push(statusCondition(sql, filter.status, idleSince));
  }
  return conditions;
}

export function whereClause(conditions: string[]): string {
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}

/** A count or sum as the driver returns it (bigint on PostgreSQL, number or null) as a number. */
export function num(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  // Prisma's Decimal (PostgreSQL numeric) converts through its own toString.
  return Number((value as { toString(): string }).toString());
}
