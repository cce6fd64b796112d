import type { Logger } from 'pino';
import type { Env } from '../config';
import { ConfigError, describePersistence, healthUrlFromEnv, loadConfig } from '../config';
import { createProcessLogger, effectiveLogFormat } from './logger';
import { VERSION } from '../version';

const USAGE = `Usage: cognition <command> [options]

Commands:
  serve                 Start the server (configured by COGNITION_* environment variables)
  migrate               Apply pending database migrations of the configured backend, then exit
  secrets rotate        Re-encrypt every stored secret (provider API keys, MCP env/headers)
                        under COGNITION_SECRETS_KEY: values in clear or under an old key
                        (COGNITION_SECRETS_OLD_KEYS); then the old keys can be removed
  health [--url URL]    Ask a running server's /health; exit 0 when healthy, 1 otherwise
                        (default URL: http://127.0.0.1:$COGNITION_PORT)
  help                  Show this help

See docs/configuration.md for every setting.
`;

/** Where the CLI writes and how it ends; injectable so tests can run commands in-process. */
export interface CliIo {
  env: Env;
  /** Whether stdout is a terminal (logs are then human-readable unless COGNITION_LOG_FORMAT says otherwise). */
  stdoutIsTerminal?: boolean;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Registers process signal handlers (serve only). */
  onSignal(signal: 'SIGTERM' | 'SIGINT', handler: () => void): void;
  exit(code: number): void;
}

const processIo: CliIo = {
  env: process.env,
  stdoutIsTerminal: process.stdout.isTTY === true,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  onSignal: (signal, handler) => void process.on(signal, handler),
  exit: (code) => process.exit(code),
};

/** Runs one CLI command; resolves with the exit code (serve resolves once listening: null). */
export async function runCli(
  argv: readonly string[],
  io: CliIo = processIo,
): Promise<number | null> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(io);
    case 'migrate':
      return runMigrate(io);
    case 'health':
      return health(rest, io);
    case 'secrets':
      return secrets(rest, io);
    case 'help':
    case '--help':
    case '-h':
      io.stdout(USAGE);
      return 0;
    case '--version':
    case 'version':
      io.stdout(`${VERSION}\n`);
      return 0;
    default:
      io.stderr(`Unknown command: ${command}\n\n${USAGE}`);
      return 2;
  }
}

function configOrReport(io: CliIo): ReturnType<typeof loadConfig> | null {
  try {
    return loadConfig(io.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`${error.message}\n`);
      return null;
    }
    throw error;
  }
}

async function serve(io: CliIo): Promise<number | null> {
  const config = configOrReport(io);
  if (!config) return 1;
  const logger = await createProcessLogger(
    config.logLevel,
    effectiveLogFormat(config.logFormat, io.stdoutIsTerminal === true),
  );
  let running: { shutdown(): Promise<{ timedOut: boolean }> } | undefined;
  let signals = 0;
  const stop = (server: NonNullable<typeof running>) => {
    server.shutdown().then(
      ({ timedOut }) => io.exit(timedOut ? 1 : 0),
      (error: unknown) => {
        logger.error({ err: error }, 'Shutdown failed');
        io.exit(1);
      },
    );
  };
  // Installed before startup, so a signal that arrives right after the "listening" line (or
  // during startup, which then completes first) is a graceful shutdown, never a default kill.
  const onSignal = (signal: string) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'Second signal: exiting immediately');
      io.exit(130);
      return;
    }
    logger.info({ signal }, 'Signal received');
    if (running) stop(running);
  };
  io.onSignal('SIGTERM', () => onSignal('SIGTERM'));
  io.onSignal('SIGINT', () => onSignal('SIGINT'));
  try {
    // Loaded on demand: `help` and `health` need none of the server's dependencies.
    const { startServer } = await import('../composition/server');
    running = await startServer(config, { logger });
  } catch (error) {
    // Settings only checkable at startup (LLM providers file, provider combinations) read like
    // the environment's own problems.
    if (error instanceof ConfigError) io.stderr(`${error.message}\n`);
    logger.fatal({ err: error }, 'Cognition failed to start');
    return 1;
  }
  if (signals > 0) stop(running);
  return null;
}

async function runMigrate(io: CliIo): Promise<number> {
  const config = configOrReport(io);
  if (!config) return 1;
  const logger: Logger = await createProcessLogger(
    config.logLevel,
    effectiveLogFormat(config.logFormat, io.stdoutIsTerminal === true),
  );
  try {
    const { migrateStorage } = await import('../composition/storage');
    const result = await migrateStorage(config.persistence);
    const target = describePersistence(config.persistence);
    if (!result) {
      io.stdout(`Nothing to migrate: ${target}\n`);
      return 0;
    }
    io.stdout(
      `Migrated ${target}: ${result.applied.length} applied` +
        (result.applied.length > 0 ? ` (${result.applied.join(', ')})` : '') +
        `, ${result.alreadyApplied.length} already applied\n`,
    );
    return 0;
  } catch (error) {
    logger.error({ err: error }, 'Migration failed');
    io.stderr(`Migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

async function secrets(args: readonly string[], io: CliIo): Promise<number> {
  if (args.length !== 1 || (args[0] !== 'rotate' && args[0] !== 're-encrypt')) {
    io.stderr(`Expected: cognition secrets rotate\n\n${USAGE}`);
    return 2;
  }
  const config = configOrReport(io);
  if (!config) return 1;
  const logger: Logger = await createProcessLogger(
    config.logLevel,
    effectiveLogFormat(config.logFormat, io.stdoutIsTerminal === true),
  );
  if (config.persistence.backend === 'memory') {
    io.stdout('Nothing to re-encrypt: memory storage keeps nothing\n');
    return 0;
  }
  const { createStorage } = await import('../composition/storage');
  const { createSecretCipher, compactStorage, reencryptRegistry } =
    await import('../composition/secrets');
  const storage = createStorage(config.persistence, { artifactMaxBytes: config.artifactMaxBytes });
  try {
    await storage.initialize();
    const cipher = createSecretCipher(config.secrets, storage.kind, logger);
    if (cipher.currentKeyId === null) {
      io.stderr('Cannot re-encrypt: COGNITION_SECRETS_KEY is not set (NODE_ENV=production)\n');
      return 1;
    }
    const result = await reencryptRegistry(storage.registry, cipher);
    for (const entry of result.rewritten) {
      io.stdout(`re-encrypted ${entry.kind} "${entry.name}" (${entry.secrets} secret(s))\n`);
    }
    for (const entry of result.failed) {
      io.stderr(`failed ${entry.kind} "${entry.name}": ${entry.reason}\n`);
    }
    io.stdout(
      `Secrets under key id ${cipher.currentKeyId}: ${result.rewritten.length} entries re-encrypted, ` +
        `${result.unchanged} already current, ${result.failed.length} failed\n`,
    );
    if (config.persistence.backend === 'sqlite' && result.rewritten.length > 0) {
      await storage.close();
      compactStorage(config.persistence);
      io.stdout(`Compacted ${config.persistence.path} (VACUUM): the replaced values are gone\n`);
    }
    return result.failed.length > 0 ? 1 : 0;
  } catch (error) {
    logger.error({ err: error }, 'Re-encryption failed');
    io.stderr(`Re-encryption failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await storage.close();
  }
}

async function health(args: readonly string[], io: CliIo): Promise<number> {
  let url = healthUrlFromEnv(io.env);
  let timeoutMs = 5000;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    const value = args[i + 1];
    if (arg === '--url' && value) {
      url = value.replace(/\/+$/, '');
      i += 1;
    } else if (arg === '--timeout' && value && Number(value) > 0) {
      timeoutMs = Number(value) * 1000;
      i += 1;
    } else {
      io.stderr(`Unexpected argument: ${arg}\n\n${USAGE}`);
      return 2;
    }
  }
  const target = url.endsWith('/health') ? url : `${url}/health`;
  try {
    const response = await fetch(target, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    io.stdout(`${text}\n`);
    let status: unknown;
    try {
      status = (JSON.parse(text) as { status?: unknown }).status;
    } catch {
      status = undefined;
    }
    if (response.ok && status === 'healthy') return 0;
    io.stderr(`Unhealthy: HTTP ${response.status}, status ${String(status)}\n`);
    return 1;
  } catch (error) {
    io.stderr(
      `Cannot reach ${target}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
}
