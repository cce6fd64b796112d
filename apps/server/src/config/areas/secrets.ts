import path from 'node:path';
import type { SecretKey } from '@cognition/runtime';
import { parseSecretKey } from '@cognition/runtime';
import type { AreaBuilder, SettingsReader } from '../settings';
import type { ServerConfig } from '../types';
import { list } from '../values';

// Secrets at rest (provider API keys, MCP servers' env/headers in the registry): the current
// key (COGNITION_SECRETS_KEY), the keys still read (COGNITION_SECRETS_OLD_KEYS), and whether
// this is production (NODE_ENV=production: no development key file is made).

export function readSecrets(settings: SettingsReader): AreaBuilder<Pick<ServerConfig, 'secrets'>> {
  const currentText = settings.read('COGNITION_SECRETS_KEY');
  const oldText = settings.read('COGNITION_SECRETS_OLD_KEYS') ?? '';
  const production = settings.read('NODE_ENV') === 'production';
  let current: SecretKey | null = null;
  if (currentText !== undefined) {
    const parsed = parseSecretKey(currentText);
    if ('problem' in parsed)
      settings.invalid('COGNITION_SECRETS_KEY', `COGNITION_SECRETS_KEY: ${parsed.problem}`);
    else current = parsed;
  }
  const old: SecretKey[] = [];
  list(oldText).forEach((entry, index) => {
    const parsed = parseSecretKey(entry);
    if ('problem' in parsed) {
      settings.invalid(
        'COGNITION_SECRETS_OLD_KEYS',
        `COGNITION_SECRETS_OLD_KEYS entry ${index + 1}: ${parsed.problem}`,
      );
      return;
    }
    const clash = [...(current ? [current] : []), ...old].find((key) => key.id === parsed.id);
    if (clash && !clash.key.equals(parsed.key)) {
      settings.invalid(
        'COGNITION_SECRETS_OLD_KEYS',
        `COGNITION_SECRETS_OLD_KEYS entry ${index + 1}: key id "${parsed.id}" is already used by another key`,
      );
      return;
    }
    if (!clash) old.push(parsed);
  });
  const workspaceRoot = settings.workspaceRoot();
  return () => ({
    secrets: {
      key: current,
      oldKeys: old,
      production,
      devKeyFile: path.join(workspaceRoot, '.cognition', 'secrets.key'),
    },
  });
}
