import type { ApiServices, AuthConfig } from '@cognition/api';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router } from 'express';
import type { Response } from 'express';
import { toHttpError } from '@cognition/api';
import { requestLog } from '../../request-log';
import {
  JSON_RPC,
  jsonRpcBody,
  protocolCaller,
  sendCallerError,
  sendJsonRpcError,
} from '../json-rpc';
import { buildMcpServer } from './mcp-server';

export const MCP_PATH = '/mcp';

export interface McpMountOptions {
  auth: AuthConfig;
  services: ApiServices;
  maxBodyBytes: number;
}

/**
 * `/mcp`: the Model Context Protocol server (Streamable HTTP, stateless). Every POST is served
 * by a fresh server and transport for its caller; responses that stream (a tool call's progress)
 * are SSE in the same response. No MCP session id is issued and no standalone GET stream is
 * offered (405), which the transport specification allows: any node can answer any request.
 */
export function mcpRouter(options: McpMountOptions): Router {
  const router = Router();
  router.post(MCP_PATH, ...jsonRpcBody(options.maxBodyBytes), async (req, res) => {
    let context;
    try {
      context = protocolCaller(req, res, options.auth, options.services);
    } catch (error) {
      sendCallerError(res, error);
      return;
    }
    try {
      const server = await buildMcpServer(context.api, options.services.version);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.once('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      // Refused before the protocol ran (the agent list: a rate limit...): the caller's answer.
      if (toHttpError(error).status < 500) {
        sendCallerError(res, error);
        return;
      }
      requestLog(req).error({ err: error }, 'MCP request failed');
      sendJsonRpcError(res, 500, null, {
        code: JSON_RPC.INTERNAL_ERROR,
        message: 'Internal error',
      });
    }
  });
  const notAllowed = (_req: unknown, res: Response) => {
    res.setHeader('Allow', 'POST');
    sendJsonRpcError(res, 405, null, {
      code: JSON_RPC.INVALID_REQUEST,
      message: 'Method not allowed: this MCP endpoint is stateless (POST only)',
    });
  };
  router.get(MCP_PATH, notAllowed);
  router.delete(MCP_PATH, notAllowed);
  return router;
}
