import type { RequestHandler } from 'express';

/**
 * A router loaded on the first request under one of `prefixes` (a prefix matches itself and
 * what lies below it). The open protocols' SDKs (MCP, A2A, AG-UI) are large module graphs that
 * most deployments never call, and a server that loaded them at every start would pay for that
 * in start-up time and memory. Requests elsewhere pass straight on. A load that fails is answered
 * as an error (500) and tried again by the next request.
 */
export function lazyRouter(
  prefixes: readonly string[],
  load: () => Promise<RequestHandler>,
): RequestHandler {
  let loading: Promise<RequestHandler> | undefined;
  return (req, res, next) => {
    const under = prefixes.some((p) => req.path === p || req.path.startsWith(`${p}/`));
    if (!under) {
      next();
      return;
    }
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    loading.then((router) => router(req, res, next), next);
  };
}
