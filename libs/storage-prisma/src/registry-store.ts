import type {
  DeleteRegistryEntryInput,
  PutRegistryEntryInput,
  RegistryEntry,
  RegistryKind,
  RegistryStore,
} from '@cognition/storage';
import {
  compareRegistryEntries,
  DeleteRegistryEntryInputSchema,
  parseInput,
  PutRegistryEntryInputSchema,
  StorageError,
} from '@cognition/storage';
import type { PrismaDb } from './db/db';
import { guard, isUniqueViolation } from './db/errors';
import type { RawConnection } from './db/raw-connections';
import { requireRawConnection } from './db/raw-connections';
import type { RawSelect } from './db/raw-select';
import { pgUtc, rawDate, rawSelect } from './db/raw-select';
import type { RegistryEntry as RegistryRow } from './generated/postgres/client';

/**
 * `list` runs on every send (the run resolves its agent from the registry's current snapshot),
 * so it is a prepared statement on the driver instead of a Prisma query (~1 ms of CPU to
 * compile, every time).
 */
const LIST: Record<'all' | 'ofKind', RawSelect> = {
  all: {
    name: 'cognition_registry_all',
    sqlite: 'SELECT kind, name, version, data, created_at, updated_at FROM registry_entries',
    postgres: `SELECT kind, name, version, data, ${pgUtc('created_at')}, ${pgUtc('updated_at')}
      FROM registry_entries`,
  },
  ofKind: {
    name: 'cognition_registry_of_kind',
    sqlite: `SELECT kind, name, version, data, created_at, updated_at FROM registry_entries
      WHERE kind = ?`,
    postgres: `SELECT kind, name, version, data, ${pgUtc('created_at')}, ${pgUtc('updated_at')}
      FROM registry_entries WHERE kind = $1`,
  },
};

interface RawRegistryRow {
  kind: string;
  name: string;
  version: number;
  data: string;
  created_at: unknown;
  updated_at: unknown;
}

function toEntry(row: RegistryRow): RegistryEntry {
  return {
    kind: row.kind as RegistryKind,
    name: row.name,
    version: row.version,
    data: JSON.parse(row.data) as Record<string, unknown>,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function versionConflict(kind: RegistryKind, name: string, expected: number): StorageError {
  return new StorageError(
    'VERSION_CONFLICT',
    `The ${kind} "${name}" is no longer at the expected version ${expected}`,
  );
}

/** Attempts of an unconditional put that lost a race between its update and its insert. */
const UPSERT_ATTEMPTS = 5;

/**
 * The configuration registry on the `registry_entries` table. Every versioned write is one
 * conditional statement (`WHERE version = expected`), so concurrent writers cannot both win.
 */
export class PrismaRegistryStore implements RegistryStore {
  private readonly raw: RawConnection;

  constructor(private readonly db: PrismaDb) {
    this.raw = requireRawConnection(db, 'The registry store');
  }

  get(kind: RegistryKind, name: string): Promise<RegistryEntry | null> {
    return guard('read registry entry', async () => {
      const row = await this.db.registryEntry.findUnique({ where: { kind_name: { kind, name } } });
      return row ? toEntry(row) : null;
    });
  }

  list(kind?: RegistryKind): Promise<RegistryEntry[]> {
    return guard('list registry entries', async () => {
      const rows = (
        kind === undefined
          ? await rawSelect<RawRegistryRow>(this.raw, LIST.all, [])
          : await rawSelect<RawRegistryRow>(this.raw, LIST.ofKind, [kind])
      ).map((row): RegistryRow => ({
        kind: row.kind,
        name: row.name,
        version: Number(row.version),
        data: row.data,
        createdAt: rawDate(row.created_at),
        updatedAt: rawDate(row.updated_at),
      }));
      // Sorted here: database collations order names differently (SQLite binary, Postgres locale).
      return rows.map(toEntry).sort(compareRegistryEntries);
    });
  }

  put(input: PutRegistryEntryInput): Promise<RegistryEntry> {
    return guard('write registry entry', async () => {
      const { kind, name, data, expectedVersion } = parseInput(
        PutRegistryEntryInputSchema,
        input,
        'registry entry',
      );
      const json = JSON.stringify(data);
      if (expectedVersion === null) return this.create(kind, name, json);
      if (expectedVersion !== undefined) {
        const updated = await this.update(kind, name, json, expectedVersion);
        if (updated) return updated;
        const stored = await this.get(kind, name);
        if (!stored) throw new StorageError('NOT_FOUND', `The ${kind} "${name}" does not exist`);
        throw versionConflict(kind, name, expectedVersion);
      }
      for (let attempt = 1; ; attempt += 1) {
        const stored = await this.get(kind, name);
        if (stored) {
          const updated = await this.update(kind, name, json, stored.version);
          if (updated) return updated;
        } else {
          try {
            return await this.create(kind, name, json);
          } catch (error) {
            if (!(error instanceof StorageError && error.code === 'CONFLICT')) throw error;
          }
        }
        if (attempt >= UPSERT_ATTEMPTS) throw versionConflict(kind, name, stored?.version ?? 0);
      }
    });
  }

  delete(input: DeleteRegistryEntryInput): Promise<boolean> {
    return guard('delete registry entry', async () => {
      const { kind, name, expectedVersion } = parseInput(
        DeleteRegistryEntryInputSchema,
        input,
        'registry delete',
      );
      const { count } = await this.db.registryEntry.deleteMany({
        where: {
          kind,
          name,
          ...(expectedVersion !== undefined ? { version: expectedVersion } : {}),
        },
      });
      if (count > 0) return true;
      if (expectedVersion !== undefined && (await this.get(kind, name))) {
        throw versionConflict(kind, name, expectedVersion);
      }
      return false;
    });
  }

  private async create(kind: RegistryKind, name: string, data: string): Promise<RegistryEntry> {
    const now = new Date();
    try {
      const row = await this.db.registryEntry.create({
        data: { kind, name, version: 1, data, createdAt: now, updatedAt: now },
      });
      return toEntry(row);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new StorageError('CONFLICT', `The ${kind} "${name}" already exists`);
      }
      throw error;
    }
  }

  /** The conditional replace; null when no row is at `expected` (moved on, or missing). */
  private async update(
    kind: RegistryKind,
    name: string,
    data: string,
    expected: number,
  ): Promise<RegistryEntry | null> {
    const { count } = await this.db.registryEntry.updateMany({
      where: { kind, name, version: expected },
      data: { data, version: expected + 1, updatedAt: new Date() },
    });
    return count === 0 ? null : this.get(kind, name);
  }
}
