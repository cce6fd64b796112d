import { healthToBody } from '../convert';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import { errorResponse } from '../responses';
import { HealthBody, ReadyBody } from '../schemas/health';

/** Probes: `/health` (anonymous callers see less) and `/ready`. */
export const HEALTH_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Service health',
    description:
      'Open to every caller (no key needed). `active_sessions` counts active sessions in the ' +
      "caller's scope, `runs` this process's run admission (executing, queued, limit) and `node` " +
      'its id, the runs it owns and (several nodes) its Redis; they are null for a caller that ' +
      'presented no key (when keys are configured) or not every scope header (when scoping is ' +
      'enabled). Always 200; read `status`.',
    tag: 'operations',
    caller: 'optional',
    request: {},
    responses: {
      200: { description: 'Health report', schema: HealthBody },
      401: errorResponse('An API key was presented and is wrong'),
    },
    async handle({ api, identified }) {
      const report = await api.health.get();
      // Load figures are for callers that identified themselves, like the session count.
      const activeSessions = identified ? report.activeSessions : null;
      const runs = identified ? report.runs : null;
      const node = identified ? report.node : null;
      return { status: 200, body: healthToBody({ ...report, activeSessions, runs, node }) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/ready',
    operationId: 'ready',
    summary: 'Readiness',
    description: '200 once storage answers; 503 before that and while shutting down.',
    tag: 'operations',
    caller: 'key',
    request: {},
    responses: {
      200: { description: 'Ready', schema: ReadyBody },
      401: errorResponse('Missing or invalid API key (when API keys are configured)'),
      503: { description: 'Not ready', schema: ReadyBody },
    },
    async handle({ api, shuttingDown }) {
      // A draining node reports not-ready so load balancers stop sending it new work.
      const ready = !shuttingDown && (await api.health.ready()).ready;
      return { status: ready ? 200 : 503, body: { ready } };
    },
  }),
];
