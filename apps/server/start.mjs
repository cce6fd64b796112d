// `npm start`: builds the server bundle if any of its inputs changed, then runs it in this very
// process (so SIGTERM/SIGINT reach the server directly, with no shell in between).
import { createRequire } from 'node:module';
import { buildServer, serverMain } from './build.mjs';

try {
  await buildServer({ ifNeeded: true });
} catch {
  // esbuild has already printed the errors.
  process.exit(1);
}
createRequire(import.meta.url)(serverMain);
