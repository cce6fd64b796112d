import type { RequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import {
  isIpLiteral,
  isLoopbackHostname,
  matchesAllowedHost,
  parseHostHeader,
} from '../config/areas/hosts';
import { sendError } from './rest/errors';

// The guard against DNS rebinding and cross-site requests (docs/security.md, "Host and Origin").
//
// - `Host`: a loopback name (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`), any IP address,
//   or a host of `COGNITION_ALLOWED_HOSTS`, with any port. A page that rebinds its own domain to
//   127.0.0.1 still sends its domain as Host, never an IP literal: so IP addresses (a balancer's
//   health probe, a client that knows the address) pass. No Host at all (HTTP/1.0, e.g.
//   HAProxy's health check) is no browser either and passes.
// - `Origin`, on requests that can change state (every method but GET, HEAD and OPTIONS — tRPC
//   mutations are POSTs; its subscriptions and queries are GETs that change nothing): a page on
//   a loopback name or an allowed host, the server's own origin (the dashboard), or an origin of
//   `COGNITION_CORS_ORIGINS`. No Origin (curl, SDKs) passes; `null` (sandboxed frames, files)
//   does not.
//
// Answers 403 naming the setting that would allow the request.

export interface HostCheckOptions {
  /** `COGNITION_ALLOWED_HOSTS`, canonical (`*`, `.example.com`, `name`, `ip`). */
  allowedHosts: readonly string[];
  /** `COGNITION_CORS_ORIGINS` (`*` allows every origin). */
  corsOrigins: readonly string[];
}

/** Whether the check runs: always without API keys; with keys, once hosts are listed. */
export function hostCheckEnabled(apiKeys: number, allowedHosts: readonly string[]): boolean {
  if (allowedHosts.includes('*')) return false;
  return apiKeys === 0 || allowedHosts.length > 0;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export type HostVerdict = { ok: true } | { ok: false; detail: string };

/** The verdict on one request's Host and Origin headers. */
export function checkHostAndOrigin(
  req: Pick<IncomingMessage, 'method' | 'headers'>,
  options: HostCheckOptions,
): HostVerdict {
  const hostHeader = req.headers.host;
  let host: { hostname: string; port: string } | null = null;
  if (hostHeader !== undefined && hostHeader !== '') {
    host = parseHostHeader(hostHeader);
    if (
      host === null ||
      !(
        isLoopbackHostname(host.hostname) ||
        isIpLiteral(host.hostname) ||
        matchesAllowedHost(host.hostname, options.allowedHosts)
      )
    ) {
      return {
        ok: false,
        detail:
          `Host ${JSON.stringify(hostHeader.slice(0, 100))} is not allowed: this server answers ` +
          'loopback names (localhost, 127.0.0.1, [::1]), IP addresses and the hosts listed in ' +
          'COGNITION_ALLOWED_HOSTS (a guard against DNS rebinding). To serve it under this name, ' +
          'add the name to COGNITION_ALLOWED_HOSTS.',
      };
    }
  }

  const origin = req.headers.origin;
  if (origin === undefined || SAFE_METHODS.has(req.method ?? 'GET')) return { ok: true };
  if (originAllowed(origin, hostHeader, options)) return { ok: true };
  return {
    ok: false,
    detail:
      `Origin ${JSON.stringify(origin.slice(0, 200))} may not change state here: accepted are ` +
      "pages on loopback names, this server's own origin, the hosts listed in " +
      'COGNITION_ALLOWED_HOSTS and the origins listed in COGNITION_CORS_ORIGINS (a guard against ' +
      "cross-site requests). To let that page's scripts call this server, add its origin to " +
      'COGNITION_CORS_ORIGINS.',
  };
}

function originAllowed(
  origin: string,
  hostHeader: string | undefined,
  options: HostCheckOptions,
): boolean {
  if (options.corsOrigins.includes('*') || options.corsOrigins.includes(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null`, or not an origin at all
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
    return false;
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (isLoopbackHostname(hostname) || matchesAllowedHost(hostname, options.allowedHosts)) {
    return true;
  }
  // The server's own origin: the page came from this server under a Host that passed above.
  if (hostHeader === undefined) return false;
  try {
    return new URL(`${url.protocol}//${hostHeader}`).host === url.host;
  } catch {
    return false;
  }
}

/** The middleware: a refused request ends here with 403 FORBIDDEN. */
export function hostCheck(options: HostCheckOptions): RequestHandler {
  return (req, res, next) => {
    const verdict = checkHostAndOrigin(req, options);
    if (verdict.ok) {
      next();
      return;
    }
    sendError(res, 403, { detail: verdict.detail, code: 'FORBIDDEN' });
  };
}
