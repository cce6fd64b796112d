import type { Artifact, ArtifactEncoding, ArtifactVersion, StringMap } from '@cognition/contracts';
import type {
  Artifact as ArtifactBaseRow,
  ArtifactMetadata as MetadataRow,
  ArtifactScope as ScopeRow,
  ArtifactVersion as VersionRow,
} from '../generated/postgres/client';

/** Rows fetched with every artifact read, so scopes and metadata come back in one query. */
export const ARTIFACT_INCLUDE = { scopes: true, metadata: true } as const;

export type ArtifactRow = ArtifactBaseRow & { scopes: ScopeRow[]; metadata: MetadataRow[] };

function rowsToMap(rows: readonly { key: string; value: string }[]): StringMap {
  const map: StringMap = {};
  for (const row of rows) map[row.key] = row.value;
  return map;
}

export function toArtifact(row: ArtifactRow): Artifact {
  return {
    id: row.id,
    name: row.name,
    type: row.type as Artifact['type'],
    visibility: row.visibility as Artifact['visibility'],
    contentType: row.contentType,
    encoding: row.encoding as ArtifactEncoding,
    size: row.size,
    sha256: row.sha256,
    version: row.version,
    sessionId: row.sessionId,
    runId: row.runId,
    metadata: rowsToMap(row.metadata),
    scopes: rowsToMap(row.scopes),
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toArtifactVersion(row: Omit<VersionRow, 'content'>): ArtifactVersion {
  return {
    artifactId: row.artifactId,
    version: row.version,
    contentType: row.contentType,
    encoding: row.encoding as ArtifactEncoding,
    size: row.size,
    sha256: row.sha256,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
  };
}
