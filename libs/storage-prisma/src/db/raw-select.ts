import type { RawConnection } from './raw-connections';

/** One read in both dialects: `?` placeholders on SQLite, `$n` on PostgreSQL. */
export interface RawSelect {
  /** Statement name on PostgreSQL (server-side prepared once per pooled connection). */
  name: string;
  sqlite: string;
  postgres: string;
}

/**
 * Rows of `select` run on the driver `raw` (prepared once per connection). Prisma compiles
 * every query anew (no plan cache in 6.19), which costs about a millisecond of CPU per
 * statement, far more than the statement itself; the per-turn reads go around it. Outside a
 * transaction only: on SQLite the statement waits for the connection's lock like any other.
 */
export async function rawSelect<Row>(
  raw: RawConnection,
  select: RawSelect,
  values: readonly unknown[],
): Promise<Row[]> {
  if (raw.provider === 'sqlite') {
    return raw.connection.run((session) => session.prepare<Row>(select.sqlite).all(...values));
  }
  const result = await raw.pool.query({
    name: select.name,
    text: select.postgres,
    values: [...values],
  });
  return result.rows as Row[];
}

/**
 * A DateTime column as Prisma returns it. PostgreSQL gives a Date (see {@link pgUtc}); SQLite
 * keeps what was written: ISO 8601 text from Prisma and this library, unix milliseconds from
 * the integer format, or SQLite's own `CURRENT_TIMESTAMP` (`YYYY-MM-DD HH:MM:SS`, UTC without
 * a zone, which `Date` would read as local time).
 */
export function rawDate(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'number' || typeof value === 'bigint') return new Date(Number(value));
  const text = String(value);
  return new Date(
    /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text,
  );
}

export function rawDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : rawDate(value);
}

/**
 * `column` as a timestamptz in UTC: Prisma stores `timestamp(3)` without time zone in UTC, and
 * node-postgres would read a plain `timestamp` in the process's local time zone.
 */
export function pgUtc(column: string, as: string = column): string {
  return `(${column} AT TIME ZONE 'UTC') AS ${as}`;
}

/** A Date as Prisma's SQLite adapter stores a DateTime (its default `iso8601` format). */
export function sqliteTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}
