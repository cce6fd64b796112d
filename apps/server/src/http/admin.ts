import express from 'express';
import type { Router } from 'express';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** What the dashboard's build writes where each page load's nonce goes (apps/admin/vite.config.mts). */
export const NONCE_PLACEHOLDER = 'COGNITION_CSP_NONCE';

/**
 * The `<style>` elements Radix renders with fixed text (hiding the scrollbars of a select's list
 * and of a scroll area): allowed by their hashes. A Radix upgrade that changes them shows up as a
 * CSP error in the dashboard's browser test, with the new hash in the message.
 */
const RADIX_STYLE_HASHES = [
  // `[data-radix-scroll-area-viewport]{scrollbar-width:none;…}`
  "'sha256-vGQdhYJbTuF+M8iCn1IZCHpdkiICocWHDq4qnQF4Rjw='",
  // `[data-radix-select-viewport]{scrollbar-width:none;…}`
  "'sha256-441zG27rExd4/il+NvIqyL8zFx5XmyNQtE381kSkUJk='",
];

/**
 * The dashboard's Content-Security-Policy: its pages may load only what this server serves and
 * talk only to it, so a message rendered in the dashboard cannot pull in a script or leak data
 * elsewhere. Nothing inline runs or applies without this page load's nonce (the scroll lock's
 * `<style>`, whose text depends on the window) or one of the hashes above.
 */
export function adminCsp(nonce: string | null): string {
  const once = nonce === null ? '' : ` 'nonce-${nonce}'`;
  return (
    `default-src 'self'; script-src 'self'${once}; ` +
    `style-src 'self'${once} ${RADIX_STYLE_HASHES.join(' ')}; img-src 'self' data:; ` +
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
  );
}

/**
 * The dashboard's built assets (apps/admin, `node apps/admin/build.mjs`; `npm start` builds them)
 * under /admin, same origin as /trpc. The page itself is made per load, with a fresh nonce.
 */
export function adminRouter(adminDir: string): Router {
  const router = express.Router();
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
  router.get(['/', '/index.html'], (req, res, next) => {
    // `/admin` becomes `/admin/`, as a static folder answers (the page's links are absolute).
    if (req.originalUrl.split('?')[0] === req.baseUrl) {
      next();
      return;
    }
    const nonce = randomBytes(16).toString('base64');
    res.setHeader('Content-Security-Policy', adminCsp(nonce));
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(readFileSync(index, 'utf8').replaceAll(NONCE_PLACEHOLDER, nonce));
  });
  router.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', adminCsp(null));
    next();
  });
  router.use(express.static(adminDir, { index: false, redirect: true }));
  return router;
}
