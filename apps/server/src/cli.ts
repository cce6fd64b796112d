import { runCli } from './cli/commands';

// Entry point of the `cognition` command (bin in apps/server/package.json): serve, migrate, health.
runCli(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
