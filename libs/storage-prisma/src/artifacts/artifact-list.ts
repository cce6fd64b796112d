import type { ArtifactPage, ListArtifactsQuery, StringMap } from '@cognition/contracts';
import type { ArtifactAccess } from '@cognition/storage';
import { SqlBuilder } from '../analytics/sql-filters';
import type { RawConnection } from '../db/raw-connections';
import { rawDate } from '../db/raw-select';
import type { ArtifactRow } from './artifact-mapping';
import { toArtifact } from './artifact-mapping';

/**
 * `artifacts.list` as SQL on the driver: the agent's context lists the `policy` and `memory`
 * artifacts at the start of every turn, usually finding none, and through Prisma each list
 * was three statements (rows, then scopes and metadata even for an empty page) compiled anew.
 * Here: the page (the same WHERE as the Prisma model's filters: scope and metadata as indexed
 * `EXISTS`, the agent's visibility rule), the scopes and metadata of its rows in one
 * `UNION ALL` when it has any, and a COUNT only when the page does not tell the total.
 */
type Query = Required<Pick<ListArtifactsQuery, 'limit' | 'offset'>> &
  Omit<ListArtifactsQuery, 'limit' | 'offset'>;

const COLUMNS = `a.id, a.name, a.type, a.visibility, a.scope_key, a.name_owner, a.session_id,
  a.run_id, a.version, a.content_type, a.encoding, a.size, a.sha256, a.created_by`;

function conditions(sql: SqlBuilder, q: Query, scope: StringMap, access: ArtifactAccess): string {
  const where: string[] = [];
  for (const [key, value] of Object.entries(scope)) {
    where.push(`EXISTS (SELECT 1 FROM artifact_scopes x WHERE x.artifact_id = a.id
      AND x.key = ${sql.param(key)} AND x.value = ${sql.param(value)})`);
  }
  for (const [key, value] of Object.entries(q.metadata ?? {})) {
    where.push(`EXISTS (SELECT 1 FROM artifact_metadata x WHERE x.artifact_id = a.id
      AND x.key = ${sql.param(key)} AND x.value = ${sql.param(value)})`);
  }
  const agent = access.agent;
  if (agent) {
    where.push(`(a.visibility = 'public'
      OR (a.visibility = 'private' AND a.session_id = ${sql.param(agent.sessionId)})
      OR (a.visibility = 'run' AND a.run_id = ${sql.param(agent.runId)}))`);
  }
  if (q.type !== undefined) where.push(`a.type = ${sql.param(q.type)}`);
  if (q.visibility !== undefined) where.push(`a.visibility = ${sql.param(q.visibility)}`);
  if (q.sessionId !== undefined) where.push(`a.session_id = ${sql.param(q.sessionId)}`);
  if (q.name !== undefined) where.push(`a.name = ${sql.param(q.name)}`);
  return where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
}

async function query<Row>(raw: RawConnection, sql: SqlBuilder, text: string): Promise<Row[]> {
  if (raw.provider === 'sqlite') {
    return raw.connection.run((session) => session.prepare<Row>(text).all(...sql.params));
  }
  // Unnamed: the text varies with the filters; PostgreSQL plans it per call, which is cheap
  // next to Prisma's compile.
  const result = await raw.pool.query({ text, values: sql.params });
  return result.rows as Row[];
}

interface RawArtifactRow {
  id: string;
  name: string;
  type: string;
  visibility: string;
  scope_key: string;
  name_owner: string;
  session_id: string | null;
  run_id: string | null;
  version: number;
  content_type: string;
  encoding: string;
  size: number;
  sha256: string;
  created_by: string;
  created_at: unknown;
  updated_at: unknown;
}

export async function listArtifactsRaw(
  raw: RawConnection,
  q: Query,
  scope: StringMap,
  access: ArtifactAccess,
): Promise<ArtifactPage> {
  const provider = raw.provider;
  const dates =
    provider === 'sqlite'
      ? 'a.created_at, a.updated_at'
      : `(a.created_at AT TIME ZONE 'UTC') AS created_at,
        (a.updated_at AT TIME ZONE 'UTC') AS updated_at`;
  const page = new SqlBuilder(provider);
  const where = conditions(page, q, scope, access);
  const rows = await query<RawArtifactRow>(
    raw,
    page,
    `SELECT ${COLUMNS}, ${dates} FROM artifacts a ${where}
      ORDER BY a.updated_at DESC, a.id ASC
      LIMIT ${page.param(q.limit)} OFFSET ${page.param(q.offset)}`,
  );
  const pairs = rows.length === 0 ? [] : await scopesAndMetadata(raw, rows);
  const artifacts = rows.map((row) => toArtifact(toRow(row, pairs)));
  // A short page that reached its offset ends the list, so it gives the total without a COUNT.
  const ended = rows.length < q.limit && (rows.length > 0 || q.offset === 0);
  if (ended) return { artifacts, total: q.offset + rows.length };
  const count = new SqlBuilder(provider);
  const counted = await query<{ total: number | string }>(
    raw,
    count,
    `SELECT COUNT(*) AS total FROM artifacts a ${conditions(count, q, scope, access)}`,
  );
  return { artifacts, total: Number(counted[0]?.total ?? 0) };
}

interface Pair {
  kind: number;
  artifact_id: string;
  key: string;
  value: string;
}

async function scopesAndMetadata(
  raw: RawConnection,
  rows: readonly RawArtifactRow[],
): Promise<Pair[]> {
  const sql = new SqlBuilder(raw.provider);
  const ids = (): string => rows.map((row) => sql.param(row.id)).join(', ');
  return query<Pair>(
    raw,
    sql,
    `SELECT 0 AS kind, artifact_id, key, value FROM artifact_scopes WHERE artifact_id IN (${ids()})
      UNION ALL
      SELECT 1 AS kind, artifact_id, key, value FROM artifact_metadata WHERE artifact_id IN (${ids()})
      ORDER BY kind, artifact_id, key`,
  );
}

function toRow(row: RawArtifactRow, pairs: readonly Pair[]): ArtifactRow {
  const of = (kind: number) =>
    pairs
      .filter((pair) => Number(pair.kind) === kind && pair.artifact_id === row.id)
      .map((pair) => ({ artifactId: row.id, key: pair.key, value: pair.value }));
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    visibility: row.visibility,
    scopeKey: row.scope_key,
    nameOwner: row.name_owner,
    sessionId: row.session_id,
    runId: row.run_id,
    version: Number(row.version),
    contentType: row.content_type,
    encoding: row.encoding,
    size: Number(row.size),
    sha256: row.sha256,
    createdBy: row.created_by,
    createdAt: rawDate(row.created_at),
    updatedAt: rawDate(row.updated_at),
    scopes: of(0),
    metadata: of(1),
  };
}
