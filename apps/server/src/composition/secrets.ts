import { generateSecretKeyText, parseSecretKey, SecretCipher } from '@cognition/runtime';
import type { SecretKey } from '@cognition/runtime';
import { compactSqliteFile } from '@cognition/storage-prisma';
import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { PersistenceConfig, SecretsConfig } from '../config';

const SETTINGS_HINT =
  'set COGNITION_SECRETS_KEY to the current key and list earlier keys in COGNITION_SECRETS_OLD_KEYS';

/** Reads the development key file, or creates it (0600, in a 0700 directory) when missing. */
function developmentKey(file: string): { key: SecretKey; created: boolean } {
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  let created = false;
  if (text === undefined) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    text = `${generateSecretKeyText()}\n`;
    // Written whole under a name of its own, then linked into place: two servers starting at
    // once on one workspace (a cluster's nodes) must not each write a key, and the one that
    // loses must never read a file the other has created but not yet written.
    const temp = `${file}.${process.pid}.${randomUUID()}`;
    writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temp, file);
      created = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      text = readFileSync(file, 'utf8');
    } finally {
      rmSync(temp, { force: true });
    }
  }
  const parsed = parseSecretKey(text);
  if ('problem' in parsed) {
    throw new Error(`The development secrets key file ${file} is not valid: ${parsed.problem}`);
  }
  return { key: parsed, created };
}

/**
 * The cipher of the registry's secrets at rest, as the configuration says, with one start-up
 * line saying which key is in use:
 * - `COGNITION_SECRETS_KEY` set: that key (and `COGNITION_SECRETS_OLD_KEYS` for reading);
 * - else in production (`NODE_ENV=production`): no key: a write holding a secret is refused
 *   (503 naming the setting), secrets stored in clear before still read;
 * - else with memory storage: a random key for this process (nothing outlives it anyway);
 * - else: the development key file `<workspace>/.cognition/secrets.key`, created (mode 0600)
 *   when missing.
 */
export function createSecretCipher(
  config: SecretsConfig,
  storageKind: string,
  logger: Logger,
): SecretCipher {
  const old = config.oldKeys;
  if (config.key) {
    logger.info(
      { keyId: config.key.id, oldKeyIds: old.map((k) => k.id) },
      `Secrets at rest: encrypted with key id ${config.key.id} (COGNITION_SECRETS_KEY)` +
        (old.length > 0 ? `; also reading key ids ${old.map((k) => k.id).join(', ')}` : ''),
    );
    return new SecretCipher({ current: config.key, old, missingKey: SETTINGS_HINT });
  }
  if (config.production) {
    logger.warn(
      'Secrets at rest: no COGNITION_SECRETS_KEY in production (NODE_ENV=production): provider API keys and MCP env/headers cannot be stored until it is set',
    );
    return new SecretCipher({
      current: null,
      old,
      missingKey: `NODE_ENV=production and COGNITION_SECRETS_KEY is not set: ${SETTINGS_HINT}`,
    });
  }
  if (storageKind === 'memory') {
    const key = parseSecretKey(generateSecretKeyText()) as SecretKey;
    logger.debug('Secrets at rest: memory storage, a key of this process only');
    return new SecretCipher({ current: key, old, missingKey: SETTINGS_HINT });
  }
  const { key, created } = developmentKey(config.devKeyFile);
  logger.warn(
    { keyId: key.id, file: config.devKeyFile, created },
    `Secrets at rest: no COGNITION_SECRETS_KEY; ${created ? 'created a development key' : 'using the development key'} at ${config.devKeyFile} (mode 0600, key id ${key.id}). Set COGNITION_SECRETS_KEY in production (docs/deployment.md#secrets-at-rest)`,
  );
  return new SecretCipher({
    current: key,
    old,
    missingKey: `${SETTINGS_HINT} (the development key file ${config.devKeyFile} holds key id ${key.id})`,
  });
}

// The CLI's `secrets rotate` loads this module lazily (with the storage it needs), so the rest of
// the CLI starts without the runtime.
export { reencryptRegistry } from '@cognition/runtime';

/** After a rotation: the replaced values leave a SQLite file (VACUUM); nothing to do elsewhere. */
export function compactStorage(persistence: PersistenceConfig): void {
  if (persistence.backend === 'sqlite') compactSqliteFile(persistence.path);
}
