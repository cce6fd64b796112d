import express from 'express';
import type { Router } from 'express';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The dashboard's built assets (apps/admin, `node apps/admin/build.mjs`; `npm start` builds them)
 * under /admin, same origin as /trpc. Its pages may load only what this server serves and talk
 * only to it: a message rendered in the dashboard cannot pull in a script or leak data elsewhere.
 */
export const ADMIN_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export function adminRouter(adminDir: string): Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', ADMIN_CSP);
    next();
  });
  const index = path.join(adminDir, 'index.html');
  router.use((req, res, next) => {
    if (existsSync(index)) {
      next();
      return;
    }
    res.status(404).json({
      detail: `The dashboard is not built (${index} is missing): run \`node apps/admin/build.mjs\`, or start the server with \`npm start\`, which builds it.`,
      code: 'NOT_FOUND',
    });
  });
  router.use(express.static(adminDir, { index: 'index.html', redirect: true }));
  return router;
}
