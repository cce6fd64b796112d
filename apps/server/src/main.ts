import { runCli } from './cli/commands';

// `node dist/apps/server/main.js` serves; the other commands live in the `cognition` CLI.
runCli(['serve']).then(
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
