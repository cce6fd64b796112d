import type { RequestHandler } from 'express';
import { z } from 'zod';

/** The JSON answer of `GET /` (documented in the OpenAPI document). */
export const LandingBody = z
  .object({
    name: z.literal('Cognition'),
    version: z.string(),
    links: z
      .object({
        admin: z.string().nullable().meta({ description: 'The dashboard; null when not served' }),
        openapi: z.string(),
        health: z.string(),
        trpc: z.string(),
      })
      .meta({ description: 'Where to go from here (paths on this server, or a URL)' }),
  })
  .meta({ id: 'Landing' });

export type LandingBodyT = z.infer<typeof LandingBody>;

/**
 * `GET /`: a browser (its `Accept` prefers HTML) is redirected to the dashboard, or gets a small
 * page of links when no dashboard is served; anything else (curl, scripts) gets JSON naming the
 * same places. No data and no key needed: it only says where things are.
 */
export function landing(options: { version: string; admin: boolean }): RequestHandler {
  const body: LandingBodyT = {
    name: 'Cognition',
    version: options.version,
    links: {
      admin: options.admin ? '/admin/' : null,
      openapi: '/openapi.json',
      health: '/health',
      trpc: '/trpc',
    },
  };
  return (req, res) => {
    const wantsHtml = req.accepts(['application/json', 'text/html']) === 'text/html';
    if (!wantsHtml) {
      res.json(body);
      return;
    }
    if (options.admin) {
      res.redirect(302, '/admin/');
      return;
    }
    res.type('html').send(landingPage(body));
  };
}

function landingPage(body: LandingBodyT): string {
  const item = (href: string, label: string) => `<li><a href="${href}">${label}</a></li>`;
  const version = body.version.replace(/[^\w.+-]/g, '');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cognition ${version}</title></head>
<body><h1>Cognition ${version}</h1><ul>
${item(body.links.openapi, 'OpenAPI document (/openapi.json)')}
${item(body.links.health, 'Health (/health)')}
</ul><p>The dashboard (/admin/) is not served by this process.</p></body></html>
`;
}
