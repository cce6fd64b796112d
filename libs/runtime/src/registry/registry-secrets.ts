import type {
  DeleteRegistryEntryInput,
  PutRegistryEntryInput,
  RegistryEntry,
  RegistryKind,
  RegistryStore,
  StorageBackend,
} from '@cognition/storage';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import type { SecretCipher } from '../secrets/secret-cipher';

/*
 * The registry's secrets and where they sit in a stored entry's data: a provider's `apiKey`, and
 * every value of an agent's `mcp_servers[].env` and `mcp_servers[].headers` (the names stay
 * readable: they are not secret and an operator needs them to see what is set).
 */

type Transform = (value: string) => string;

/** What a registry secret is bound to (the cipher's context): its entry. */
function entryContext(kind: RegistryKind, name: string): string {
  return `registry:${kind}:${name}`;
}

function mapRecordValues(record: unknown, transform: Transform): unknown {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return record;
  return Object.fromEntries(
    Object.entries(record as Record<string, unknown>).map(([name, value]) => [
      name,
      typeof value === 'string' ? transform(value) : value,
    ]),
  );
}

/** `data` with every secret passed through `transform` (a copy; the rest shared). */
function mapRegistrySecrets(
  kind: RegistryKind,
  data: Record<string, unknown>,
  transform: Transform,
): Record<string, unknown> {
  if (kind === 'provider') {
    const apiKey = data['apiKey'];
    return typeof apiKey === 'string' ? { ...data, apiKey: transform(apiKey) } : data;
  }
  const servers = data['mcp_servers'];
  if (!Array.isArray(servers)) return data;
  return {
    ...data,
    mcp_servers: servers.map((server: unknown) => {
      if (server === null || typeof server !== 'object' || Array.isArray(server)) return server;
      const copy = { ...(server as Record<string, unknown>) };
      if ('env' in copy) copy['env'] = mapRecordValues(copy['env'], transform);
      if ('headers' in copy) copy['headers'] = mapRecordValues(copy['headers'], transform);
      return copy;
    }),
  };
}

/** Every secret value of `data`, as stored. */
function registrySecrets(kind: RegistryKind, data: Record<string, unknown>): string[] {
  const found: string[] = [];
  mapRegistrySecrets(kind, data, (value) => {
    found.push(value);
    return value;
  });
  return found;
}

/**
 * The registry store as the runtime uses it: secrets are encrypted on their way into the backend
 * and decrypted on their way out, so every backend (and every copy of the database) holds only
 * ciphertext, and the backends stay unaware of it.
 *
 * A listed entry whose secret cannot be decrypted (its key is no longer configured, or the value
 * was altered) is left out and logged: one unreadable row must not stop every run (the registry
 * leaves out invalid rows the same way). `get` throws the cipher's error instead (a write that
 * would keep that secret cannot).
 */
export class SecretRegistryStore implements RegistryStore {
  constructor(
    private readonly inner: RegistryStore,
    private readonly cipher: SecretCipher,
    private readonly logger: Logger = silentLogger,
  ) {}

  async get(kind: RegistryKind, name: string): Promise<RegistryEntry | null> {
    const entry = await this.inner.get(kind, name);
    return entry ? this.decrypted(entry) : null;
  }

  async list(kind?: RegistryKind): Promise<RegistryEntry[]> {
    const entries = await this.inner.list(kind);
    const readable: RegistryEntry[] = [];
    for (const entry of entries) {
      try {
        readable.push(this.decrypted(entry));
      } catch (error) {
        this.logger.error(
          { kind: entry.kind, name: entry.name, version: entry.version },
          `Stored ${entry.kind} "${entry.name}" is not used: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return readable;
  }

  async put(input: PutRegistryEntryInput): Promise<RegistryEntry> {
    const context = entryContext(input.kind, input.name);
    const data = mapRegistrySecrets(input.kind, input.data, (value) =>
      this.cipher.encrypt(value, context),
    );
    return this.decrypted(await this.inner.put({ ...input, data }));
  }

  delete(input: DeleteRegistryEntryInput): Promise<boolean> {
    return this.inner.delete(input);
  }

  private decrypted(entry: RegistryEntry): RegistryEntry {
    return {
      ...entry,
      data: mapRegistrySecrets(entry.kind, entry.data, (value) =>
        this.cipher.decrypt(value, entryContext(entry.kind, entry.name)),
      ),
    };
  }
}

/**
 * `storage` whose `registry` encrypts its secrets (everything else is the backend itself), for
 * the composition root to hand to every part that reads or writes the registry.
 */
export function withEncryptedRegistry(
  storage: StorageBackend,
  cipher: SecretCipher,
  logger?: Logger,
): StorageBackend {
  const registry = new SecretRegistryStore(storage.registry, cipher, logger);
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'registry') return registry;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** What `reencryptRegistry` did. */
export interface ReencryptResult {
  /** The entries written again (every secret now under the current key). */
  rewritten: { kind: RegistryKind; name: string; secrets: number }[];
  /** Entries whose secrets were all under the current key already (or that hold none). */
  unchanged: number;
  /** Entries that could not be rewritten, and why (e.g. a key id no longer configured). */
  failed: { kind: RegistryKind; name: string; reason: string }[];
}

/**
 * Rewrites every registry entry holding a secret that is not under the cipher's current key —
 * stored in clear (before encryption existed) or under an old key — so the old keys can be
 * retired. Reads the backend's raw entries; each write is at the entry's version, so an entry
 * changed meanwhile (a concurrent write already encrypts under the current key) is read again.
 */
export async function reencryptRegistry(
  raw: RegistryStore,
  cipher: SecretCipher,
): Promise<ReencryptResult> {
  const result: ReencryptResult = { rewritten: [], unchanged: 0, failed: [] };
  for (const listed of await raw.list()) {
    let entry: RegistryEntry | null = listed;
    for (let attempt = 0; entry && attempt < 3; attempt += 1) {
      const stale = registrySecrets(entry.kind, entry.data).filter((v) => cipher.needsRotation(v));
      if (stale.length === 0) {
        result.unchanged += 1;
        break;
      }
      try {
        const context = entryContext(entry.kind, entry.name);
        const data = mapRegistrySecrets(entry.kind, entry.data, (value) =>
          cipher.needsRotation(value)
            ? cipher.encrypt(cipher.decrypt(value, context), context)
            : value,
        );
        await raw.put({ kind: entry.kind, name: entry.name, data, expectedVersion: entry.version });
        result.rewritten.push({ kind: entry.kind, name: entry.name, secrets: stale.length });
        break;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if ((code === 'VERSION_CONFLICT' || code === 'NOT_FOUND') && attempt < 2) {
          entry = await raw.get(listed.kind, listed.name);
          if (!entry) result.unchanged += 1;
          continue;
        }
        result.failed.push({
          kind: listed.kind,
          name: listed.name,
          reason: error instanceof Error ? error.message : String(error),
        });
        break;
      }
    }
  }
  return result;
}
