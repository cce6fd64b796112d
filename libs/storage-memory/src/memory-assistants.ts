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
import { clone } from './clone';

const notFound = (what: string) => new StorageError('NOT_FOUND', `${what} not found`);

/**
 * The memory backend's assistants: the assistants and their versions in two maps. Every method
 * runs synchronously to its end, so a version number cannot be taken twice.
 */
export class MemoryAssistantStore implements AssistantStore {
  private readonly assistants = new Map<string, StoredAssistant>();
  private readonly versions = new Map<string, AssistantVersion[]>();

  constructor(private readonly now: () => Date) {}

  create(input: NewAssistant, scope: Scope): Promise<StoredAssistant> {
    return settle(() => {
      const { id, ...fields } = parseInput(NewAssistantSchema, input, 'assistant');
      if (this.assistants.has(id)) {
        throw new StorageError('CONFLICT', `Assistant ${id} already exists`);
      }
      const now = this.now();
      const assistant: StoredAssistant = {
        ...clone(fields),
        id,
        version: 1,
        scope: { ...scope },
        createdAt: now,
        updatedAt: now,
      };
      this.assistants.set(id, assistant);
      this.versions.set(id, [{ ...clone(fields), assistantId: id, version: 1, createdAt: now }]);
      return clone(assistant);
    });
  }

  get(id: string, scope: Scope): Promise<StoredAssistant | null> {
    const assistant = this.visible(id, scope);
    return Promise.resolve(assistant ? clone(assistant) : null);
  }

  list(scope: Scope, filter: { graphId?: string } = {}): Promise<StoredAssistant[]> {
    const found = [...this.assistants.values()].filter(
      (a) =>
        scopeMatches(scope, a.scope) &&
        (filter.graphId === undefined || a.graphId === filter.graphId),
    );
    return Promise.resolve(found.sort(compareAssistants).map((a) => clone(a)));
  }

  update(id: string, patch: AssistantPatch, scope: Scope): Promise<StoredAssistant> {
    return settle(() => {
      const parsed = parseInput(AssistantPatchSchema, patch, 'assistant patch');
      const assistant = this.visible(id, scope);
      if (!assistant) throw notFound('Assistant');
      const versions = this.versions.get(id) ?? [];
      const version = Math.max(...versions.map((v) => v.version)) + 1;
      const fields = patchedFields(assistant, parsed);
      const now = this.now();
      versions.push({ ...clone(fields), assistantId: id, version, createdAt: now });
      return this.replace(assistant, fields, version, now);
    });
  }

  delete(id: string, scope: Scope): Promise<boolean> {
    if (!this.visible(id, scope)) return Promise.resolve(false);
    this.assistants.delete(id);
    this.versions.delete(id);
    return Promise.resolve(true);
  }

  listVersions(id: string, scope: Scope): Promise<AssistantVersion[]> {
    if (!this.visible(id, scope)) return Promise.resolve([]);
    const versions = [...(this.versions.get(id) ?? [])].sort((a, b) => b.version - a.version);
    return Promise.resolve(versions.map((v) => clone(v)));
  }

  setLatest(id: string, version: number, scope: Scope): Promise<StoredAssistant> {
    return settle(() => {
      const assistant = this.visible(id, scope);
      if (!assistant) throw notFound('Assistant');
      const chosen = this.versions.get(id)?.find((v) => v.version === version);
      if (!chosen) throw notFound('Assistant version');
      const { assistantId: _id, version: _v, createdAt: _at, ...fields } = chosen;
      return this.replace(assistant, fields, version, this.now());
    });
  }

  private replace(
    assistant: StoredAssistant,
    fields: AssistantFields,
    version: number,
    now: Date,
  ): StoredAssistant {
    const next: StoredAssistant = { ...assistant, ...clone(fields), version, updatedAt: now };
    this.assistants.set(assistant.id, next);
    return clone(next);
  }

  private visible(id: string, scope: Scope): StoredAssistant | undefined {
    const assistant = this.assistants.get(id);
    return assistant && scopeMatches(scope, assistant.scope) ? assistant : undefined;
  }
}

function settle<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
