import type { ApiServices, AuthConfig } from '@cognition/api';
import { toHttpError } from '@cognition/api';
import { AgentCard } from '@a2a-js/sdk';
import { jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { Router } from 'express';
import type { Request, RequestHandler, Response } from 'express';
import type { AgentView } from '@cognition/contracts';
import { identify } from '../../rest/handler';
import { serversFor } from '../../rest/openapi';
import { exposedAgents } from '../agent-turn';
import {
  JSON_RPC,
  invalidEnvelope,
  jsonRpcBody,
  protocolCaller,
  sendCallerError,
  sendJsonRpcError,
} from '../json-rpc';
import { CallerUser, CognitionA2AHandler } from './a2a-handler';

export const A2A_PREFIX = '/a2a';

export interface A2aMountOptions {
  auth: AuthConfig;
  services: ApiServices;
  maxBodyBytes: number;
}

/** The A2A v1.0 agent card of one agent (JSON), with the v0.3 binding on the same URL. */
export function agentCardJson(agent: AgentView, baseUrl: string, version: string, keyed: boolean) {
  const url = `${baseUrl}${A2A_PREFIX}/${agent.name}`;
  const card = AgentCard.fromJSON({
    name: agent.name,
    description: agent.description,
    version,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    provider: { organization: 'Cognition', url: baseUrl },
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: agent.name, name: agent.name, description: agent.description, tags: ['agent'] }],
    ...(keyed
      ? {
          securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
        }
      : {}),
  });
  return AgentCard.toJSON(card);
}

/**
 * A2A: one agent per path, `/a2a/<agent>` (JSON-RPC, v1.0 and v0.3 method names) with its card at
 * `/a2a/<agent>/.well-known/agent-card.json`, the spec's discovery rule applied to the agent's
 * URL. Cards, like `/openapi.json`, need the API key when keys are configured (the card says so).
 */
export function a2aRouter(options: A2aMountOptions): Router {
  const { auth, services, maxBodyBytes } = options;
  const router = Router();
  const users = new WeakMap<Request, CallerUser>();

  const agentNamed = async (
    req: Request,
    res: Response,
    name: string,
  ): Promise<AgentView | undefined> => {
    const { api } = protocolCaller(req, res, auth, services);
    return (await exposedAgents(api, 'a2a')).find((agent) => agent.name === name);
  };

  const card =
    (agentName: (req: Request) => string): RequestHandler =>
    async (req, res) => {
      try {
        identify(req, 'key', auth);
        const name = agentName(req);
        const agent = await agentNamed(req, res, name);
        if (!agent) {
          res.status(404).json({ detail: `Agent not found: ${name}`, code: 'NOT_FOUND' });
          return;
        }
        const base = serversFor(req)[0]?.url ?? '';
        const keyed = auth.apiKeys.length > 0;
        res.json(agentCardJson(agent, base === '/' ? '' : base, services.version, keyed));
      } catch (error) {
        const { status, body } = toHttpError(error);
        res.status(status).json(body);
      }
    };
  router.get(
    `${A2A_PREFIX}/:agent/.well-known/agent-card.json`,
    card((req) => String(req.params['agent'])),
  );
  // The server's own well-known card (RFC 8615 places it at the root): its `default` agent.
  router.get(
    '/.well-known/agent-card.json',
    card(() => 'default'),
  );

  // Who calls and which agent, before the SDK's transport runs (it gets them as the user).
  const resolve: RequestHandler = async (req, res, next) => {
    try {
      const name = String(req.params['agent']);
      const { api, caller } = protocolCaller(req, res, auth, services);
      const agent = (await exposedAgents(api, 'a2a')).find((a) => a.name === name);
      if (!agent) {
        sendJsonRpcError(res, 404, null, {
          code: JSON_RPC.METHOD_NOT_FOUND,
          message: `Agent not found: ${name}`,
        });
        return;
      }
      users.set(req, new CallerUser(api, agent.name, caller.apiKeyId ?? 'anonymous', caller.scope));
      next();
    } catch (error) {
      sendCallerError(res, error);
    }
  };
  const rpc = jsonRpcHandler({
    requestHandler: new CognitionA2AHandler(services),
    userBuilder: (req) => {
      const user = users.get(req);
      return user ? Promise.resolve(user) : Promise.reject(new Error('caller not resolved'));
    },
    legacyCompat: { enabled: true },
  });
  const envelope: RequestHandler = (req, res, next) => {
    const problem = invalidEnvelope(req.body);
    if (problem === null) {
      next();
      return;
    }
    const id = (req.body as { id?: unknown } | null)?.id;
    sendJsonRpcError(res, 400, typeof id === 'string' || typeof id === 'number' ? id : null, {
      code: JSON_RPC.INVALID_REQUEST,
      message: `Invalid Request: ${problem}`,
    });
  };
  const body = jsonRpcBody(maxBodyBytes);
  router.post(`${A2A_PREFIX}/:agent`, ...body, envelope, resolve, (req, res, next) => {
    // The SDK's router answers at its own root: the agent's URL is it.
    const url = req.url;
    req.url = '/';
    rpc(req, res, (error?: unknown) => {
      req.url = url;
      next(error);
    });
  });
  return router;
}
