import { randomUUID } from 'node:crypto';
import type {
  Artifact,
  ArtifactPage,
  ArtifactVersion,
  ArtifactWithContent,
  CreateArtifactInput,
  ListArtifactsQuery,
  UpdateArtifactInput,
} from '@cognition/contracts';
import {
  CreateArtifactInputSchema,
  ListArtifactsQuerySchema,
  StringMapSchema,
  UpdateArtifactInputSchema,
} from '@cognition/contracts';
import type {
  ArtifactAccess,
  ArtifactStore,
  ArtifactStoreOptions,
  Scope,
} from '@cognition/storage';
import {
  artifactActor,
  artifactMaxBytes,
  artifactNameOwner,
  artifactNotFound,
  artifactScopeKey,
  artifactVisibleTo,
  decodeArtifactContent,
  defaultContentType,
  encodeArtifactContent,
  metadataMatches,
  parseInput,
  scopeMatches,
  StorageError,
} from '@cognition/storage';
import { clone } from './clone';

interface StoredVersion {
  version: ArtifactVersion;
  bytes: Buffer;
}

interface ArtifactRecord {
  artifact: Artifact;
  versions: StoredVersion[];
}

/** What the artifact store needs to know of the rest of the memory backend. */
export interface MemoryArtifactHost {
  /** The scopes of a session, undefined when it does not exist. */
  sessionScopes(sessionId: string): Scope | undefined;
  /** The session of a run, undefined when it does not exist. */
  runSession(runId: string): string | undefined;
  now(): Date;
}

/** The memory backend's artifacts: maps, deep copies out, the same rules as the databases. */
export class MemoryArtifactStore implements ArtifactStore {
  private readonly records = new Map<string, ArtifactRecord>();
  private readonly maxBytes: number;

  constructor(
    private readonly host: MemoryArtifactHost,
    options?: ArtifactStoreOptions,
  ) {
    this.maxBytes = artifactMaxBytes(options);
  }

  create(input: CreateArtifactInput, access: ArtifactAccess): Promise<ArtifactWithContent> {
    return settle(() => {
      const data = parseInput(CreateArtifactInputSchema, input, 'artifact');
      const scope = parseInput(StringMapSchema, access.scope, 'scope');
      const sessionId = data.sessionId ?? null;
      const runId = data.runId ?? null;
      if (sessionId !== null) {
        const scopes = this.host.sessionScopes(sessionId);
        if (!scopes || !scopeMatches(scope, scopes)) throw StorageError.sessionNotFound(sessionId);
      }
      if (runId !== null && this.host.runSession(runId) !== sessionId) {
        throw new StorageError('RUN_NOT_FOUND', `Run not found: ${runId}`);
      }
      const encoded = encodeArtifactContent(data.content, data.encoding, this.maxBytes);
      const owner = artifactNameOwner(data.visibility, sessionId);
      const key = artifactScopeKey(scope);
      for (const { artifact } of this.records.values()) {
        if (
          artifact.name === data.name &&
          artifactScopeKey(artifact.scopes) === key &&
          artifactNameOwner(artifact.visibility, artifact.sessionId) === owner
        ) {
          throw new StorageError('CONFLICT', `Artifact name already used: ${data.name}`);
        }
      }
      const now = this.host.now();
      const createdBy = artifactActor(access);
      const artifact: Artifact = {
        id: randomUUID(),
        name: data.name,
        type: data.type,
        visibility: data.visibility,
        contentType: data.contentType ?? defaultContentType(data.encoding),
        encoding: data.encoding,
        size: encoded.size,
        sha256: encoded.sha256,
        version: 1,
        sessionId,
        runId,
        metadata: data.metadata,
        scopes: scope,
        createdBy,
        createdAt: now,
        updatedAt: now,
      };
      this.records.set(artifact.id, {
        artifact,
        versions: [{ version: versionOf(artifact), bytes: encoded.bytes }],
      });
      return clone({ ...artifact, content: data.content });
    });
  }

  get(id: string, access: ArtifactAccess, version?: number): Promise<ArtifactWithContent | null> {
    return settle(() => {
      const record = this.visible(id, access);
      if (!record) return null;
      const stored = record.versions.find(
        (v) => v.version.version === (version ?? record.artifact.version),
      );
      if (!stored) return null;
      const { artifactId: _id, createdAt: _at, createdBy: _by, ...described } = stored.version;
      return clone({
        ...record.artifact,
        ...described,
        content: decodeArtifactContent(stored.bytes, stored.version.encoding),
      });
    });
  }

  list(query: ListArtifactsQuery, access: ArtifactAccess): Promise<ArtifactPage> {
    return settle(() => {
      const q = parseInput(ListArtifactsQuerySchema, query, 'artifact query');
      parseInput(StringMapSchema, access.scope, 'scope');
      const matching = [...this.records.values()]
        .map((r) => r.artifact)
        .filter(
          (a) =>
            artifactVisibleTo(a, access) &&
            (q.type === undefined || a.type === q.type) &&
            (q.visibility === undefined || a.visibility === q.visibility) &&
            (q.sessionId === undefined || a.sessionId === q.sessionId) &&
            (q.name === undefined || a.name === q.name) &&
            metadataMatches(q.metadata, a.metadata),
        )
        .sort((x, y) => y.updatedAt.getTime() - x.updatedAt.getTime() || (x.id < y.id ? -1 : 1));
      return clone({
        artifacts: matching.slice(q.offset, q.offset + q.limit),
        total: matching.length,
      });
    });
  }

  update(id: string, input: UpdateArtifactInput, access: ArtifactAccess): Promise<Artifact> {
    return settle(() => {
      const data = parseInput(UpdateArtifactInputSchema, input, 'artifact update');
      const record = this.visible(id, access);
      if (!record) throw artifactNotFound(id);
      const current = record.artifact;
      if (data.expectedVersion !== undefined && data.expectedVersion !== current.version) {
        throw new StorageError(
          'VERSION_CONFLICT',
          `Artifact ${id} is at version ${current.version}, not ${data.expectedVersion}`,
        );
      }
      const now = this.host.now();
      const next: Artifact = { ...current, updatedAt: now };
      if (data.metadata !== undefined) next.metadata = data.metadata;
      const encoding = data.encoding ?? (data.content === undefined ? current.encoding : 'utf8');
      const contentType = data.contentType ?? current.contentType;
      const encoded =
        data.content === undefined
          ? undefined
          : encodeArtifactContent(data.content, encoding, this.maxBytes);
      if (
        (encoded && encoded.sha256 !== current.sha256) ||
        encoding !== current.encoding ||
        contentType !== current.contentType
      ) {
        const bytes = encoded?.bytes ?? lastBytes(record);
        Object.assign(next, {
          version: current.version + 1,
          encoding,
          contentType,
          size: encoded?.size ?? current.size,
          sha256: encoded?.sha256 ?? current.sha256,
        });
        record.versions.push({
          version: { ...versionOf(next), createdBy: artifactActor(access), createdAt: now },
          bytes,
        });
      }
      record.artifact = next;
      return clone(next);
    });
  }

  delete(id: string, access: ArtifactAccess): Promise<boolean> {
    return settle(() => {
      if (!this.visible(id, access)) return false;
      return this.records.delete(id);
    });
  }

  listVersions(id: string, access: ArtifactAccess): Promise<ArtifactVersion[] | null> {
    return settle(() => {
      const record = this.visible(id, access);
      return record ? clone(record.versions.map((v) => v.version)) : null;
    });
  }

  deleteScratch(runId: string): Promise<number> {
    return settle(() => {
      let deleted = 0;
      for (const [id, { artifact }] of this.records) {
        if (artifact.type === 'scratch' && artifact.runId === runId) {
          this.records.delete(id);
          deleted += 1;
        }
      }
      return deleted;
    });
  }

  /** Called by the session delete: its private and run artifacts go, public ones stay. */
  deleteSessionArtifacts(sessionId: string): void {
    for (const [id, { artifact }] of this.records) {
      if (artifact.sessionId === sessionId && artifact.visibility !== 'public') {
        this.records.delete(id);
      }
    }
  }

  private visible(id: string, access: ArtifactAccess): ArtifactRecord | undefined {
    parseInput(StringMapSchema, access.scope, 'scope');
    const record = this.records.get(id);
    return record && artifactVisibleTo(record.artifact, access) ? record : undefined;
  }
}

function versionOf(artifact: Artifact): ArtifactVersion {
  return {
    artifactId: artifact.id,
    version: artifact.version,
    contentType: artifact.contentType,
    encoding: artifact.encoding,
    size: artifact.size,
    sha256: artifact.sha256,
    createdBy: artifact.createdBy,
    createdAt: artifact.createdAt,
  };
}

function lastBytes(record: ArtifactRecord): Buffer {
  const last = record.versions[record.versions.length - 1];
  if (!last) throw new StorageError('STORAGE_ERROR', 'artifact without versions');
  return last.bytes;
}

/** Runs synchronously, answering as a promise (errors become rejections, like a database's). */
function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
