import { ARTIFACT_MAX_BYTES_DEFAULT } from '@cognition/contracts';
import express from 'express';
import type { Express, RequestHandler } from 'express';
import { sendDomainError } from './errors';
import type { RouteDeps } from './handler';
import { identify, restHandler } from './handler';
import { buildOpenApiDocument, serversFor } from './openapi';
import type { OpenApiDocument } from './openapi';
import { expressPath } from './route';
import { REST_ROUTES } from './routes';
import { SseHeartbeat } from '../sse-heartbeat';

export interface RestMountOptions extends RouteDeps {
  maxBodyBytes: number;
  /** Largest artifact content (decoded); the artifact routes' body limit follows it. */
  artifactMaxBytes?: number;
  /** What the OpenAPI document describes besides the routes (scope headers, bearer auth, /metrics). */
  openApi: Omit<Parameters<typeof buildOpenApiDocument>[0], 'version'>;
}

/** Mounts every REST route (with its body parser) and `/openapi.json`, which describes them. */
export function mountRest(app: Express, options: RestMountOptions): void {
  const { maxBodyBytes, artifactMaxBytes, openApi, ...deps } = options;
  const jsonBody = express.json({
    limit: maxBodyBytes,
    // Every REST body is JSON whatever the Content-Type says: the original Cognition's curl
    // examples send `-d '{...}'` without a JSON content type.
    type: () => true,
  });

  const artifactJsonBody = express.json({
    // base64 is 4/3 of the bytes; the rest of the body (name, metadata) fits in the slack.
    limit: Math.max(
      maxBodyBytes,
      Math.ceil(((artifactMaxBytes ?? ARTIFACT_MAX_BYTES_DEFAULT) * 4) / 3) + 64 * 1024,
    ),
    type: () => true,
  });

  // One timer pings every open REST event stream.
  const heartbeat = new SseHeartbeat(deps.sse.heartbeatMs);
  for (const route of REST_ROUTES) {
    const parser = route.request.bodyLimit === 'artifact' ? artifactJsonBody : jsonBody;
    const handlers: RequestHandler[] = route.request.body ? [parser] : [];
    handlers.push(restHandler(route, deps, heartbeat));
    app[route.method](expressPath(route.path), ...handlers);
  }

  // Generated on the first request for it: walking every route's schemas is a noticeable part of
  // a start, and most processes never serve the document.
  let openApiDocument: OpenApiDocument | undefined;
  app.get('/openapi.json', (req, res) => {
    try {
      identify(req, 'key', deps.auth);
      openApiDocument ??= buildOpenApiDocument({ version: deps.services.version, ...openApi });
      const { openapi, info, ...rest } = openApiDocument;
      res.json({ openapi, info, servers: serversFor(req), ...rest });
    } catch (error) {
      sendDomainError(res, error);
    }
  });
}
