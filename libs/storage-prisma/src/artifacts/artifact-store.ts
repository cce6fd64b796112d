import { randomUUID } from 'node:crypto';
import type {
  Artifact,
  ArtifactPage,
  ArtifactVersion,
  ArtifactWithContent,
  CreateArtifactInput,
  ListArtifactsQuery,
  StringMap,
  UpdateArtifactInput,
} from '@cognition/contracts';
import {
  CreateArtifactInputSchema,
  ListArtifactsQuerySchema,
  StringMapSchema,
  UpdateArtifactInputSchema,
} from '@cognition/contracts';
import type { ArtifactAccess, ArtifactStore, ArtifactStoreOptions } from '@cognition/storage';
import {
  artifactActor,
  artifactMaxBytes,
  artifactNameOwner,
  artifactNotFound,
  artifactScopeKey,
  decodeArtifactContent,
  defaultContentType,
  encodeArtifactContent,
  parseInput,
  StorageError,
} from '@cognition/storage';
import type { PrismaDb, PrismaTx } from '../db/db';
import { guard, isUniqueViolation } from '../db/errors';
import type { RawConnection } from '../db/raw-connections';
import { requireRawConnection } from '../db/raw-connections';
import type { Prisma } from '../generated/postgres/client';
import type { ArtifactRow } from './artifact-mapping';
import { ARTIFACT_INCLUDE, toArtifact, toArtifactVersion } from './artifact-mapping';
import { listArtifactsRaw } from './artifact-list';
import { mapToRows } from '../mapping';

const DELETE_SCRATCH = {
  sqlite: "DELETE FROM artifacts WHERE run_id = ? AND type = 'scratch'",
  postgres: "DELETE FROM artifacts WHERE run_id = $1 AND type = 'scratch'",
};

/** Writers without `expectedVersion` that lose a race re-read and try again this many times. */
const UPDATE_ATTEMPTS = 5;

class LostRace extends Error {}

/**
 * Artifacts on SQLite/PostgreSQL. Visibility and scope are part of every query's WHERE, so an
 * artifact the caller may not see is never read. A content change is a conditional
 * `UPDATE … WHERE version = <read version>` plus the new version's row, in one transaction: of
 * concurrent writers at one version exactly one matches.
 */
export class PrismaArtifactStore implements ArtifactStore {
  private readonly maxBytes: number;
  private readonly raw: RawConnection;

  constructor(
    private readonly db: PrismaDb,
    options?: ArtifactStoreOptions,
  ) {
    this.maxBytes = artifactMaxBytes(options);
    this.raw = requireRawConnection(db, 'The artifact store');
  }

  create(input: CreateArtifactInput, access: ArtifactAccess): Promise<ArtifactWithContent> {
    return guard('create artifact', async () => {
      const data = parseInput(CreateArtifactInputSchema, input, 'artifact');
      const scope = parseInput(StringMapSchema, access.scope, 'scope');
      const encoded = encodeArtifactContent(data.content, data.encoding, this.maxBytes);
      const sessionId = data.sessionId ?? null;
      const runId = data.runId ?? null;
      return this.db.$transaction(async (tx) => {
        if (sessionId !== null) {
          const session = await tx.session.findFirst({
            where: { id: sessionId, AND: sessionScopeWhere(scope) },
            select: { id: true },
          });
          if (!session) throw StorageError.sessionNotFound(sessionId);
        }
        if (runId !== null) {
          const run = await tx.run.findFirst({
            where: { id: runId, sessionId: sessionId ?? '' },
            select: { id: true },
          });
          if (!run) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${runId}`);
        }
        const id = randomUUID();
        const now = new Date();
        const createdBy = artifactActor(access);
        const contentType = data.contentType ?? defaultContentType(data.encoding);
        const described = {
          contentType,
          encoding: data.encoding,
          size: encoded.size,
          sha256: encoded.sha256,
          createdBy,
          createdAt: now,
        };
        const row = await tx.artifact
          .create({
            data: {
              id,
              name: data.name,
              type: data.type,
              visibility: data.visibility,
              scopeKey: artifactScopeKey(scope),
              nameOwner: artifactNameOwner(data.visibility, sessionId),
              sessionId,
              runId,
              version: 1,
              ...described,
              updatedAt: now,
              scopes: { createMany: { data: mapToRows(scope) } },
              metadata: { createMany: { data: mapToRows(data.metadata) } },
            },
            include: ARTIFACT_INCLUDE,
          })
          .catch((error: unknown) => {
            if (!isUniqueViolation(error)) throw error;
            throw new StorageError('CONFLICT', `Artifact name already used: ${data.name}`, {
              cause: error,
            });
          });
        await insertVersion(tx, {
          artifactId: id,
          version: 1,
          content: encoded.bytes.toString('base64'),
          ...described,
        });
        return { ...toArtifact(row), content: data.content };
      });
    });
  }

  get(id: string, access: ArtifactAccess, version?: number): Promise<ArtifactWithContent | null> {
    return guard('get artifact', async () => {
      const where = visibleWhere(id, access);
      const row = await this.db.artifact.findFirst({ where, include: ARTIFACT_INCLUDE });
      if (!row) return null;
      const stored = await this.db.artifactVersion.findUnique({
        where: { artifactId_version: { artifactId: id, version: version ?? row.version } },
      });
      if (!stored) return null;
      const {
        artifactId: _id,
        createdAt: _at,
        createdBy: _by,
        ...described
      } = toArtifactVersion(stored);
      return {
        ...toArtifact(row),
        ...described,
        content: decodeArtifactContent(Buffer.from(stored.content, 'base64'), described.encoding),
      };
    });
  }

  list(query: ListArtifactsQuery, access: ArtifactAccess): Promise<ArtifactPage> {
    return guard('list artifacts', async () => {
      const q = parseInput(ListArtifactsQuerySchema, query, 'artifact query');
      const scope = parseInput(StringMapSchema, access.scope, 'scope');
      return listArtifactsRaw(this.raw, q, scope, access);
    });
  }

  async update(id: string, input: UpdateArtifactInput, access: ArtifactAccess): Promise<Artifact> {
    const data = parseInput(UpdateArtifactInputSchema, input, 'artifact update');
    const where = visibleWhere(id, access);
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await guard('update artifact', () =>
          this.db.$transaction((tx) => this.updateOnce(tx, id, data, where, access)),
        );
      } catch (error) {
        if (!(error instanceof StorageError && error.details.cause instanceof LostRace))
          throw error;
        if (data.expectedVersion !== undefined || attempt >= UPDATE_ATTEMPTS) {
          throw new StorageError('VERSION_CONFLICT', `Artifact ${id} changed meanwhile`);
        }
      }
    }
  }

  delete(id: string, access: ArtifactAccess): Promise<boolean> {
    return guard('delete artifact', async () => {
      const where = visibleWhere(id, access);
      const deleted = await this.db.artifact.deleteMany({ where });
      return deleted.count > 0;
    });
  }

  listVersions(id: string, access: ArtifactAccess): Promise<ArtifactVersion[] | null> {
    return guard('list artifact versions', async () => {
      const where = visibleWhere(id, access);
      const row = await this.db.artifact.findFirst({
        where,
        select: {
          versions: {
            orderBy: { version: 'asc' },
            omit: { content: true },
          },
        },
      });
      return row ? row.versions.map(toArtifactVersion) : null;
    });
  }

  deleteScratch(runId: string): Promise<number> {
    return guard('delete scratch artifacts', async () => {
      // Every turn ends with it, usually deleting nothing: a prepared statement on the driver
      // instead of a Prisma query compiled anew. Versions, scopes and metadata cascade.
      if (this.raw.provider === 'sqlite') {
        return this.raw.connection.run(
          (session) => session.prepare(DELETE_SCRATCH.sqlite).run(runId).changes,
        );
      }
      const deleted = await this.raw.pool.query({
        name: 'cognition_delete_scratch_artifacts',
        text: DELETE_SCRATCH.postgres,
        values: [runId],
      });
      return deleted.rowCount ?? 0;
    });
  }

  private async updateOnce(
    tx: PrismaTx,
    id: string,
    data: ReturnType<typeof UpdateArtifactInputSchema.parse>,
    where: Prisma.ArtifactWhereInput,
    access: ArtifactAccess,
  ): Promise<Artifact> {
    const current = await tx.artifact.findFirst({ where });
    if (!current) throw artifactNotFound(id);
    if (data.expectedVersion !== undefined && data.expectedVersion !== current.version) {
      throw new StorageError(
        'VERSION_CONFLICT',
        `Artifact ${id} is at version ${current.version}, not ${data.expectedVersion}`,
      );
    }
    const now = new Date();
    const encoding = data.encoding ?? (data.content === undefined ? current.encoding : 'utf8');
    const contentType = data.contentType ?? current.contentType;
    const encoded =
      data.content === undefined
        ? undefined
        : encodeArtifactContent(data.content, encoding as 'utf8' | 'base64', this.maxBytes);
    const changed =
      (encoded !== undefined && encoded.sha256 !== current.sha256) ||
      encoding !== current.encoding ||
      contentType !== current.contentType;
    const version = changed ? current.version + 1 : current.version;
    const described = {
      contentType,
      encoding,
      size: encoded?.size ?? current.size,
      sha256: encoded?.sha256 ?? current.sha256,
    };
    const updated = await tx.artifact.updateMany({
      where: { id, version: current.version },
      data: { ...described, version, updatedAt: now },
    });
    if (updated.count === 0) throw new LostRace();
    if (changed) {
      const stored =
        encoded?.bytes.toString('base64') ?? (await storedContent(tx, id, current.version));
      await insertVersion(tx, {
        artifactId: id,
        version,
        content: stored,
        ...described,
        createdBy: artifactActor(access),
        createdAt: now,
      });
    }
    if (data.metadata !== undefined) {
      await tx.artifactMetadata.deleteMany({ where: { artifactId: id } });
      await tx.artifactMetadata.createMany({
        data: mapToRows(data.metadata).map((row) => ({ artifactId: id, ...row })),
      });
    }
    const row: ArtifactRow = await tx.artifact.findUniqueOrThrow({
      where: { id },
      include: ARTIFACT_INCLUDE,
    });
    return toArtifact(row);
  }
}

/** Deletes a session's private and run artifacts (its public ones stay), inside its delete. */
export async function deleteSessionArtifacts(tx: PrismaTx, sessionId: string): Promise<void> {
  await tx.artifact.deleteMany({ where: { sessionId, visibility: { not: 'public' } } });
}

/**
 * Inserts a version row on its own, returning nothing of it: created nested in the artifact's
 * create and read back, a 10 MiB content took about 4 s on SQLite; so, about 2 s.
 */
async function insertVersion(tx: PrismaTx, row: VersionInsert): Promise<void> {
  await tx.artifactVersion.create({ data: row, select: { version: true } });
}

interface VersionInsert {
  artifactId: string;
  version: number;
  content: string;
  contentType: string;
  encoding: string;
  size: number;
  sha256: string;
  createdBy: string;
  createdAt: Date;
}

/** A version's bytes as stored: base64 text. */
async function storedContent(tx: PrismaTx, id: string, version: number): Promise<string> {
  const row = await tx.artifactVersion.findUniqueOrThrow({
    where: { artifactId_version: { artifactId: id, version } },
    select: { content: true },
  });
  return row.content;
}

function sessionScopeWhere(scope: StringMap): Prisma.SessionWhereInput[] {
  return Object.entries(scope).map(([key, value]) => ({ scopes: { some: { key, value } } }));
}

/** Scope (one indexed EXISTS per key) and, for an agent, the visibility rule. */
function accessWhere(access: ArtifactAccess): Prisma.ArtifactWhereInput[] {
  const scope = parseInput(StringMapSchema, access.scope, 'scope');
  const clauses: Prisma.ArtifactWhereInput[] = Object.entries(scope).map(([key, value]) => ({
    scopes: { some: { key, value } },
  }));
  const agent = access.agent;
  if (agent) {
    clauses.push({
      OR: [
        { visibility: 'public' },
        { visibility: 'private', sessionId: agent.sessionId },
        { visibility: 'run', runId: agent.runId },
      ],
    });
  }
  return clauses;
}

function visibleWhere(id: string, access: ArtifactAccess): Prisma.ArtifactWhereInput {
  return { id, AND: accessWhere(access) };
}
