import { randomBytes } from 'node:crypto';
import { RuntimeError } from '../errors';
import { deriveKeyId, parseSecretKey, SECRET_PREFIX, SecretCipher } from './secret-cipher';

const keyA = { id: 'a', key: randomBytes(32) };
const keyB = { id: 'b', key: randomBytes(32) };

function errorOf(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('SecretCipher (issue 31: secrets at rest)', () => {
  it('round-trips a value, with a fresh IV each time and the key id beside it', () => {
    const cipher = new SecretCipher({ current: keyA });
    const one = cipher.encrypt('sk-live-do-not-leak-42');
    const two = cipher.encrypt('sk-live-do-not-leak-42');
    expect(one.startsWith(`${SECRET_PREFIX}a:`)).toBe(true);
    expect(one).not.toBe(two);
    expect(one).not.toContain('do-not-leak');
    expect(cipher.decrypt(one)).toBe('sk-live-do-not-leak-42');
    expect(cipher.decrypt(cipher.encrypt(''))).toBe('');
    expect(cipher.decrypt(cipher.encrypt('ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('refuses a tampered value (GCM authentication)', () => {
    const cipher = new SecretCipher({ current: keyA });
    const stored = cipher.encrypt('secret');
    const parts = stored.split(':');
    const body = Buffer.from(parts[5] ?? '', 'base64');
    body[0] = (body[0] ?? 0) ^ 1;
    parts[5] = body.toString('base64');
    const error = errorOf(() => cipher.decrypt(parts.join(':')));
    expect(error.code).toBe('STORAGE_ERROR');
    expect(error.message).toContain('failed authentication');
    expect(errorOf(() => cipher.decrypt(`${SECRET_PREFIX}a:xx`)).code).toBe('STORAGE_ERROR');
  });

  it('names the settings when a value needs a key id that is not configured', () => {
    const written = new SecretCipher({ current: keyB }).encrypt('secret');
    const error = errorOf(() => new SecretCipher({ current: keyA }).decrypt(written));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('key id "b"');
    expect(error.message).toContain('COGNITION_SECRETS_KEY');
    expect(error.message).toContain('COGNITION_SECRETS_OLD_KEYS');
    // The same key id with other key material fails authentication, not silently.
    const impostor = new SecretCipher({ current: { id: 'b', key: randomBytes(32) } });
    expect(errorOf(() => impostor.decrypt(written)).code).toBe('STORAGE_ERROR');
  });

  it('reads values under old keys and values stored in clear; rotation concerns both', () => {
    const old = new SecretCipher({ current: keyA }).encrypt('old secret');
    const cipher = new SecretCipher({ current: keyB, old: [keyA] });
    expect(cipher.decrypt(old)).toBe('old secret');
    expect(cipher.decrypt('plain legacy key')).toBe('plain legacy key');
    expect(cipher.needsRotation(old)).toBe(true);
    expect(cipher.needsRotation('plain legacy key')).toBe(true);
    expect(cipher.needsRotation(cipher.encrypt('new'))).toBe(false);
  });

  it('without a key refuses to encrypt, naming the setting', () => {
    const cipher = new SecretCipher({ current: null, missingKey: 'set COGNITION_SECRETS_KEY' });
    const error = errorOf(() => cipher.encrypt('secret'));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('COGNITION_SECRETS_KEY');
    expect(cipher.decrypt('plain legacy key')).toBe('plain legacy key');
  });

  it('parses keys as [<id>:]<base64 of 32 bytes>, deriving the id when none is given', () => {
    const material = randomBytes(32);
    const text = material.toString('base64');
    expect(parseSecretKey(text)).toEqual({ id: deriveKeyId(material), key: material });
    expect(parseSecretKey(`k2026:${text}`)).toEqual({ id: 'k2026', key: material });
    const short = parseSecretKey(randomBytes(16).toString('base64'));
    expect('problem' in short && short.problem).toContain('32');
    expect('problem' in short && short.problem).not.toContain(text);
    expect('problem' in parseSecretKey(`bad id!:${text}`)).toBe(true);
  });
});
