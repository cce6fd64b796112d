import path from 'node:path';
import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { PersistenceConfig, ServerConfig } from '../types';

/** Where the state lives (`COGNITION_PERSISTENCE_*`) and how large an artifact may be. */
export function readStorage(
  settings: SettingsReader,
): AreaBuilder<Pick<ServerConfig, 'persistence' | 'artifactMaxBytes'>> {
  const backend = settings.read('COGNITION_PERSISTENCE_BACKEND');
  const uri = settings.read('COGNITION_PERSISTENCE_URI');
  const poolSize = settings.read('COGNITION_PERSISTENCE_POOL_SIZE');
  const artifactMaxBytes = settings.read('COGNITION_ARTIFACT_MAX_BYTES');
  const persistence = resolvePersistence(settings, backend, uri, poolSize);
  return () => ({
    persistence: need(persistence),
    artifactMaxBytes: need(artifactMaxBytes),
  });
}

function resolvePersistence(
  settings: SettingsReader,
  backend: PersistenceConfig['backend'] | undefined,
  uri: string | undefined,
  poolSize: number | undefined,
): PersistenceConfig | undefined {
  switch (backend) {
    case undefined:
      return undefined;
    case 'memory':
      return { backend: 'memory' };
    case 'sqlite': {
      const file = uri === undefined ? '.cognition/state.db' : stripSqliteScheme(uri);
      return { backend: 'sqlite', path: path.resolve(settings.workspaceRoot(), file) };
    }
    case 'postgres': {
      if (uri === undefined) {
        settings.check(
          'COGNITION_PERSISTENCE_URI: required when COGNITION_PERSISTENCE_BACKEND is postgres (postgresql://user:pass@host:5432/db)',
        );
        return undefined;
      }
      // The original Cognition accepted SQLAlchemy-style DSNs; the driver suffix means nothing here.
      const url = uri.replace(/^postgres(ql)?\+\w+:\/\//, 'postgresql://');
      if (!/^postgres(ql)?:\/\/[^/]/.test(url)) {
        settings.check(
          'COGNITION_PERSISTENCE_URI: expected a postgresql:// URL when the backend is postgres',
        );
        return undefined;
      }
      return { backend: 'postgres', url, poolSize: poolSize ?? 10 };
    }
  }
}

function stripSqliteScheme(uri: string): string {
  return uri.replace(/^sqlite(\+\w+)?:\/\/\//, '').replace(/^file:/, '');
}

/** A one-line, secret-free description of the storage choice for the startup log. */
export function describePersistence(persistence: PersistenceConfig): string {
  switch (persistence.backend) {
    case 'memory':
      return 'memory (not persisted)';
    case 'sqlite':
      return `sqlite at ${persistence.path}`;
    case 'postgres': {
      const url = new URL(persistence.url);
      if (url.password) url.password = '***';
      return `postgres at ${url.toString()} (pool ${persistence.poolSize})`;
    }
  }
}
