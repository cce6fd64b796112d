import type {
  AssistantFields,
  AssistantPatch,
  AssistantStore,
  AssistantVersion,
  NewAssistant,
  Scope,
  StoredAssistant,
} from '@cognition/storage';
import {
  AssistantPatchSchema,
  compareAssistants,
  NewAssistantSchema,
  parseInput,
  patchedFields,
  scopeMatches,
  StorageError,
} from '@cognition/storage';
import type { PrismaDb, PrismaTx } from '../db/db';
import { guard, isUniqueViolation } from '../db/errors';
import type {
  Assistant as AssistantRow,
  AssistantVersion as VersionRow,
} from '../generated/postgres/client';

type FieldColumns = Pick<
  AssistantRow,
  'graphId' | 'name' | 'description' | 'config' | 'context' | 'metadata'
>;

function fieldsOf(row: FieldColumns): AssistantFields {
  return {
    graphId: row.graphId,
    name: row.name,
    description: row.description,
    config: JSON.parse(row.config) as Record<string, unknown>,
    context: JSON.parse(row.context) as Record<string, unknown>,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  };
}

function columnsOf(fields: AssistantFields): FieldColumns {
  return {
    graphId: fields.graphId,
    name: fields.name,
    description: fields.description,
    config: JSON.stringify(fields.config),
    context: JSON.stringify(fields.context),
    metadata: JSON.stringify(fields.metadata),
  };
}

function toAssistant(row: AssistantRow): StoredAssistant {
  return {
    ...fieldsOf(row),
    id: row.id,
    version: row.version,
    scope: JSON.parse(row.scope) as Scope,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function toVersion(row: VersionRow): AssistantVersion {
  return {
    ...fieldsOf(row),
    assistantId: row.assistantId,
    version: row.version,
    createdAt: row.createdAt,
  };
}

const notFound = (what: string) => new StorageError('NOT_FOUND', `${what} not found`);

/**
 * Assistants on `assistants` (the current version's fields) and `assistant_versions`. A write
 * that moves the current version first touches the assistant's row inside its transaction: on
 * PostgreSQL that takes the row's lock, so concurrent patches of one assistant run one after
 * the other and each reads the version the previous one wrote (no retry loop); on SQLite the
 * transaction holds the connection's only writer lock anyway. The versions' primary key
 * `(assistant_id, version)` refuses a number taken twice besides. Scope is JSON text checked in
 * code, as the schedules' is (assistants per tenant are few).
 */
export class PrismaAssistantStore implements AssistantStore {
  constructor(private readonly db: PrismaDb) {}

  create(input: NewAssistant, scope: Scope): Promise<StoredAssistant> {
    return guard('create assistant', async () => {
      const { id, ...fields } = parseInput(NewAssistantSchema, input, 'assistant');
      const now = new Date();
      const columns = columnsOf(fields);
      try {
        const row = await this.db.$transaction(async (tx) => {
          const created = await tx.assistant.create({
            data: {
              id,
              scope: JSON.stringify(scope),
              ...columns,
              version: 1,
              createdAt: now,
              updatedAt: now,
            },
          });
          await tx.assistantVersion.create({
            data: { assistantId: id, version: 1, ...columns, createdAt: now },
          });
          return created;
        });
        return toAssistant(row);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new StorageError('CONFLICT', `Assistant ${id} already exists`);
        }
        throw error;
      }
    });
  }

  get(id: string, scope: Scope): Promise<StoredAssistant | null> {
    return guard('read assistant', async () => {
      const row = await this.db.assistant.findUnique({ where: { id } });
      const assistant = row ? toAssistant(row) : null;
      return assistant && scopeMatches(scope, assistant.scope) ? assistant : null;
    });
  }

  list(scope: Scope, filter: { graphId?: string } = {}): Promise<StoredAssistant[]> {
    return guard('list assistants', async () => {
      const rows = await this.db.assistant.findMany({
        where: filter.graphId !== undefined ? { graphId: filter.graphId } : {},
      });
      return rows
        .map(toAssistant)
        .filter((a) => scopeMatches(scope, a.scope))
        .sort(compareAssistants);
    });
  }

  update(id: string, patch: AssistantPatch, scope: Scope): Promise<StoredAssistant> {
    return guard('update assistant', async () => {
      const parsed = parseInput(AssistantPatchSchema, patch, 'assistant patch');
      const row = await this.db.$transaction(async (tx) => {
        const now = new Date();
        const current = await this.locked(tx, id, scope, now);
        const top = await tx.assistantVersion.aggregate({
          where: { assistantId: id },
          _max: { version: true },
        });
        const version = (top._max.version ?? 0) + 1;
        const columns = columnsOf(patchedFields(fieldsOf(current), parsed));
        await tx.assistantVersion.create({
          data: { assistantId: id, version, ...columns, createdAt: now },
        });
        return tx.assistant.update({
          where: { id },
          data: { ...columns, version, updatedAt: now },
        });
      });
      return toAssistant(row);
    });
  }

  delete(id: string, scope: Scope): Promise<boolean> {
    return guard('delete assistant', () =>
      this.db.$transaction(async (tx) => {
        const row = await tx.assistant.findUnique({ where: { id } });
        if (!row || !scopeMatches(scope, toAssistant(row).scope)) return false;
        // Versions first: the cascade of the foreign key is not relied on (SQLite enforces
        // foreign keys only when the connection enables them).
        await tx.assistantVersion.deleteMany({ where: { assistantId: id } });
        const { count } = await tx.assistant.deleteMany({ where: { id } });
        return count > 0;
      }),
    );
  }

  listVersions(id: string, scope: Scope): Promise<AssistantVersion[]> {
    return guard('list assistant versions', async () => {
      if (!(await this.get(id, scope))) return [];
      const rows = await this.db.assistantVersion.findMany({
        where: { assistantId: id },
        orderBy: { version: 'desc' },
      });
      return rows.map(toVersion);
    });
  }

  setLatest(id: string, version: number, scope: Scope): Promise<StoredAssistant> {
    return guard('set the latest assistant version', async () => {
      const row = await this.db.$transaction(async (tx) => {
        const now = new Date();
        await this.locked(tx, id, scope, now);
        const chosen = await tx.assistantVersion.findUnique({
          where: { assistantId_version: { assistantId: id, version } },
        });
        if (!chosen) throw notFound('Assistant version');
        const columns = columnsOf(fieldsOf(chosen));
        return tx.assistant.update({
          where: { id },
          data: { ...columns, version, updatedAt: now },
        });
      });
      return toAssistant(row);
    });
  }

  /** The assistant's row, locked for the rest of the transaction (see the class comment). */
  private async locked(tx: PrismaTx, id: string, scope: Scope, now: Date): Promise<AssistantRow> {
    const { count } = await tx.assistant.updateMany({ where: { id }, data: { updatedAt: now } });
    const row = count > 0 ? await tx.assistant.findUnique({ where: { id } }) : null;
    if (!row || !scopeMatches(scope, toAssistant(row).scope)) throw notFound('Assistant');
    return row;
  }
}
