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
import { clone } from './clone';

/** The memory backend's configuration registry: one map keyed by `<kind>:<name>`. */
export class MemoryRegistryStore implements RegistryStore {
  private readonly entries = new Map<string, RegistryEntry>();

  constructor(private readonly now: () => Date) {}

  get(kind: RegistryKind, name: string): Promise<RegistryEntry | null> {
    const entry = this.entries.get(`${kind}:${name}`);
    return Promise.resolve(entry ? clone(entry) : null);
  }

  list(kind?: RegistryKind): Promise<RegistryEntry[]> {
    const all = [...this.entries.values()].filter((e) => kind === undefined || e.kind === kind);
    return Promise.resolve(all.sort(compareRegistryEntries).map((e) => clone(e)));
  }

  put(input: PutRegistryEntryInput): Promise<RegistryEntry> {
    return settle(() => {
      const { kind, name, data, expectedVersion } = parseInput(
        PutRegistryEntryInputSchema,
        input,
        'registry entry',
      );
      const key = `${kind}:${name}`;
      const stored = this.entries.get(key);
      checkVersion(kind, name, stored, expectedVersion);
      const now = this.now();
      const entry: RegistryEntry = {
        kind,
        name,
        version: (stored?.version ?? 0) + 1,
        data: clone(data),
        createdAt: stored?.createdAt ?? now,
        updatedAt: now,
      };
      this.entries.set(key, entry);
      return clone(entry);
    });
  }

  delete(input: DeleteRegistryEntryInput): Promise<boolean> {
    return settle(() => {
      const { kind, name, expectedVersion } = parseInput(
        DeleteRegistryEntryInputSchema,
        input,
        'registry delete',
      );
      const key = `${kind}:${name}`;
      const stored = this.entries.get(key);
      if (!stored) return false;
      if (expectedVersion !== undefined && stored.version !== expectedVersion) {
        throw versionConflict(kind, name, expectedVersion, stored.version);
      }
      this.entries.delete(key);
      return true;
    });
  }
}

/** Runs a synchronous operation as a promise, turning throws into rejections. */
function settle<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function versionConflict(
  kind: RegistryKind,
  name: string,
  expected: number,
  actual: number,
): StorageError {
  return new StorageError(
    'VERSION_CONFLICT',
    `The ${kind} "${name}" is at version ${actual}, not the expected ${expected}`,
  );
}

/** The rule of `RegistryStore.put`'s `expectedVersion` against what is stored. */
function checkVersion(
  kind: RegistryKind,
  name: string,
  stored: RegistryEntry | undefined,
  expectedVersion: number | null | undefined,
): void {
  if (expectedVersion === undefined) return;
  if (expectedVersion === null) {
    if (stored) throw new StorageError('CONFLICT', `The ${kind} "${name}" already exists`);
    return;
  }
  if (!stored) throw new StorageError('NOT_FOUND', `The ${kind} "${name}" does not exist`);
  if (stored.version !== expectedVersion) {
    throw versionConflict(kind, name, expectedVersion, stored.version);
  }
}
