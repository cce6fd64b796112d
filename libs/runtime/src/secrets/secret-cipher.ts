import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { RuntimeError } from '../errors';

/**
 * One key of the secrets at rest: 32 bytes of AES-256 key material and its id, which is written
 * beside every value it encrypts so a value stays readable while its key is configured (as the
 * current key or an old one) and rotation knows which values to re-encrypt.
 */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** What a stored secret starts with: the format's name and version (`v1`: AES-256-GCM). */
export const SECRET_PREFIX = 'enc:v1:';
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The id of a key given without one: derived from the key, so every node derives the same. */
export function deriveKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** A new random key, as `COGNITION_SECRETS_KEY` holds it (base64 of 32 bytes). */
export function generateSecretKeyText(): string {
  return randomBytes(32).toString('base64');
}

/**
 * Parses one key as the settings give it: `<base64 of 32 bytes>` or `<id>:<base64 of 32 bytes>`
 * (id: 1-32 of A-Z a-z 0-9 _ -). The problem never quotes the key.
 */
export function parseSecretKey(text: string): SecretKey | { problem: string } {
  const trimmed = text.trim();
  const colon = trimmed.indexOf(':');
  const id = colon === -1 ? undefined : trimmed.slice(0, colon);
  const material = colon === -1 ? trimmed : trimmed.slice(colon + 1);
  if (id !== undefined && !KEY_ID_PATTERN.test(id)) {
    return { problem: 'a key id must be 1-32 of A-Z a-z 0-9 _ - (expected [<id>:]<base64 key>)' };
  }
  const key = BASE64_PATTERN.test(material) ? Buffer.from(material, 'base64') : Buffer.alloc(0);
  if (key.length !== 32) {
    return {
      problem:
        'expected [<id>:]<base64 of 32 random bytes> (e.g. `openssl rand -base64 32`; the value is not shown)',
    };
  }
  return { id: id ?? deriveKeyId(key), key };
}

export interface SecretCipherOptions {
  /** The key new values are encrypted with; null: secrets cannot be stored (see `missingKey`). */
  current: SecretKey | null;
  /** Keys still accepted for reading (values written before a rotation). */
  old?: readonly SecretKey[];
  /** Says what to configure when a key is missing or unknown (names the settings). */
  missingKey?: string;
}

const DEFAULT_MISSING =
  'set COGNITION_SECRETS_KEY (the current key) and COGNITION_SECRETS_OLD_KEYS';

/**
 * Encrypts secrets for storage with AES-256-GCM (`node:crypto`): each value becomes
 * `enc:v1:<keyId>:<iv>:<tag>:<ciphertext>` (base64 parts, a fresh 12-byte IV each time), so a
 * value names the key it needs and tampering fails the GCM tag. A value without the prefix is a
 * secret stored in clear before encryption existed: it reads as itself until rotation encrypts it.
 */
export class SecretCipher {
  private readonly keys = new Map<string, Buffer>();
  private readonly current: SecretKey | null;
  private readonly missingKey: string;

  constructor(options: SecretCipherOptions) {
    this.current = options.current;
    this.missingKey = options.missingKey ?? DEFAULT_MISSING;
    for (const key of [...(options.old ?? []), ...(options.current ? [options.current] : [])]) {
      this.keys.set(key.id, key.key);
    }
  }

  /** The id new values are written under; null when no key is configured. */
  get currentKeyId(): string | null {
    return this.current?.id ?? null;
  }

  static isEncrypted(value: string): boolean {
    return value.startsWith(SECRET_PREFIX);
  }

  /** The key id a stored value was written under; null for a value stored in clear. */
  static keyIdOf(value: string): string | null {
    if (!SecretCipher.isEncrypted(value)) return null;
    return value.slice(SECRET_PREFIX.length).split(':')[0] ?? null;
  }

  /**
   * `context` (GCM's additional authenticated data) binds the value to where it is stored: a
   * value copied elsewhere in the database fails authentication instead of decrypting there.
   * @throws RuntimeError UNAVAILABLE when no key is configured (the message names the setting).
   */
  encrypt(plain: string, context = ''): string {
    if (!this.current) {
      throw new RuntimeError(
        'UNAVAILABLE',
        `Cannot store a secret: no encryption key is configured for secrets at rest (${this.missingKey})`,
      );
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return `${SECRET_PREFIX}${this.current.id}:${iv.toString('base64')}:${tag.toString('base64')}:${body.toString('base64')}`;
  }

  /**
   * The plain text of a stored value (a value stored in clear is returned as is).
   * @throws RuntimeError UNAVAILABLE when its key id is not configured (naming the settings),
   *   STORAGE_ERROR when it is malformed or fails authentication (tampered, or another key).
   */
  decrypt(value: string, context = ''): string {
    if (!SecretCipher.isEncrypted(value)) return value;
    const parts = value.slice(SECRET_PREFIX.length).split(':');
    const [keyId, ivText, tagText, bodyText] = parts;
    if (parts.length !== 4 || !keyId || ivText === undefined || tagText === undefined) {
      throw new RuntimeError(
        'STORAGE_ERROR',
        'A stored secret is malformed (expected enc:v1:<keyId>:<iv>:<tag>:<ciphertext>)',
      );
    }
    const key = this.keys.get(keyId);
    if (!key) {
      throw new RuntimeError(
        'UNAVAILABLE',
        `A stored secret was encrypted with key id "${keyId}", which is not configured (${this.missingKey}); configured: ${[...this.keys.keys()].join(', ') || 'none'}`,
      );
    }
    const iv = Buffer.from(ivText, 'base64');
    const tag = Buffer.from(tagText, 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new RuntimeError('STORAGE_ERROR', `A stored secret (key id "${keyId}") is malformed`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAuthTag(tag);
      decipher.setAAD(Buffer.from(context, 'utf8'));
      return Buffer.concat([
        decipher.update(Buffer.from(bodyText ?? '', 'base64')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new RuntimeError(
        'STORAGE_ERROR',
        `A stored secret (key id "${keyId}") failed authentication: it was altered or copied from another entry, or the key configured under that id is not the one it was written with`,
      );
    }
  }

  /** Whether a stored value is not yet under the current key (clear text, or an old key). */
  needsRotation(value: string): boolean {
    return SecretCipher.keyIdOf(value) !== this.current?.id;
  }
}
