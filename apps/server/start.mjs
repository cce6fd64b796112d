// `npm start`: builds the server bundle and the dashboard (served under /admin) if any of their
// inputs changed, then runs the server in this very process (so SIGTERM/SIGINT reach the server
// directly, with no shell in between).
import { createRequire } from 'node:module';
import { buildAdmin } from '../admin/build.mjs';
import { buildServer, serverMain } from './build.mjs';

try {
  await buildServer({ ifNeeded: true });
  await buildAdmin({ ifNeeded: true });
} catch {
  // esbuild and Vite have already printed the errors.
  process.exit(1);
}
createRequire(import.meta.url)(serverMain);
