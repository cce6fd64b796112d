import { randomUUID } from 'node:crypto';
import type { Caller } from '@cognition/api';
import { isStorageError } from '@cognition/storage';
import type { Scope } from '@cognition/storage';
import type { Request } from 'express';
import { z } from 'zod';
import type { Assistant, Assistants } from './assistants';
import {
  AssistantCountSchema,
  AssistantSearchSchema,
  drawGraph,
  matching,
  searchPage,
  versionView,
} from './assistants';
import { assistantSchemas, schemasView, subgraphSchemas } from './schemas';
import { JsonObject, LangGraphHttpError, parsePart } from './wire';

/** A boolean query flag as the SDK sends it (`true`/`false`; `1`/`0` taken too). */
const Flag = z
  .enum(['true', 'false', '1', '0'])
  .optional()
  .transform((v) => v === 'true' || v === '1');
/** `xray`: a flag, or how many levels of subgraphs to draw (LangGraph's number form). */
const XRay = z
  .union([z.enum(['true', 'false']), z.string().regex(/^\d+$/, 'expected true, false or a depth')])
  .optional()
  .transform((v) => (v === undefined || v === 'false' ? false : v === 'true' ? true : Number(v)));

/**
 * The assistant routes of the LangGraph API (docs/langgraph-api.md): the system assistants of
 * the graphs and the tenant's stored ones (`POST /assistants`, patched into versions).
 */

type Route = (
  method: 'get' | 'post' | 'patch' | 'delete',
  path: string,
  handle: (req: Request, caller: Caller) => Promise<unknown>,
) => void;

const Name = z.string().min(1).max(200);
const Description = z.string().max(2000).nullable();

export const AssistantCreateSchema = z
  .object({
    assistant_id: z.uuid().optional(),
    graph_id: z.string().min(1),
    config: JsonObject.optional(),
    context: JsonObject.optional(),
    metadata: JsonObject.optional(),
    if_exists: z.enum(['raise', 'do_nothing']).default('raise'),
    name: Name.optional(),
    description: Description.optional(),
  })
  .strict();

export const AssistantPatchSchema = z
  .object({
    graph_id: z.string().min(1).optional(),
    config: JsonObject.optional(),
    context: JsonObject.optional(),
    metadata: JsonObject.optional(),
    name: Name.optional(),
    description: Description.optional(),
  })
  .strict();

const VersionsSchema = z
  .object({
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    metadata: JsonObject.optional(),
  })
  .strict();

const LatestSchema = z.object({ version: z.number().int().min(1) }).strict();

const DeleteQuerySchema = z
  .object({ delete_threads: z.enum(['true', 'false', '1', '0']).optional() })
  .strict();

export interface AssistantRoutesDeps {
  assistants: Assistants;
  /** Deletes the caller's threads whose metadata names the assistant (`delete_threads`). */
  deleteThreadsOf(assistantId: string, req: Request, caller: Caller): Promise<void>;
}

export function mountAssistantRoutes(route: Route, deps: AssistantRoutesDeps): void {
  const { assistants } = deps;
  const store = assistants.store;
  const idOf = (req: Request) => parsePart(z.object({ id: z.string() }), req.params, 'path').id;

  route('post', '/assistants', async (req, caller) =>
    create(assistants, parsePart(AssistantCreateSchema, req.body, 'body'), caller.scope),
  );
  route('post', '/assistants/search', async (req, caller) => {
    const body = parsePart(AssistantSearchSchema, req.body, 'body');
    return searchPage(matching(await assistants.list(caller.scope), body), body);
  });
  route('post', '/assistants/count', async (req, caller) => {
    const body = parsePart(AssistantCountSchema, req.body, 'body');
    return matching(await assistants.list(caller.scope), body).length;
  });
  route(
    'get',
    '/assistants/:id',
    async (req, caller) => (await assistants.get(idOf(req), caller.scope)).assistant,
  );
  route('patch', '/assistants/:id', async (req, caller) => {
    const body = parsePart(AssistantPatchSchema, req.body, 'body');
    const { assistant } = await assistants.stored(idOf(req), caller.scope);
    if (body.graph_id !== undefined) await assistants.checkGraph(body.graph_id, 'body.graph_id');
    const patched = await store.update(
      assistant.assistant_id,
      {
        ...(body.graph_id !== undefined ? { graphId: body.graph_id } : {}),
        ...(body.config !== undefined ? { config: body.config } : {}),
        ...(body.context !== undefined ? { context: body.context } : {}),
        ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
      },
      caller.scope,
    );
    return (await assistants.get(patched.id, caller.scope)).assistant;
  });
  route('delete', '/assistants/:id', async (req, caller) => {
    const query = parsePart(DeleteQuerySchema, req.query, 'query');
    const { assistant } = await assistants.stored(idOf(req), caller.scope);
    const id = assistant.assistant_id;
    if (query.delete_threads === 'true' || query.delete_threads === '1') {
      await deps.deleteThreadsOf(id, req, caller);
    }
    await store.delete(id, caller.scope);
    return [id];
  });
  route('post', '/assistants/:id/versions', async (req, caller) => {
    const body = parsePart(VersionsSchema, req.body, 'body');
    const { assistant, stored } = await assistants.get(idOf(req), caller.scope);
    // A system assistant has its one version: itself.
    const versions = stored
      ? (await store.listVersions(assistant.assistant_id, caller.scope)).map(versionView)
      : [systemVersion(assistant)];
    return versions
      .filter((v) =>
        Object.entries(body.metadata ?? {}).every(
          ([key, value]) =>
            JSON.stringify((v['metadata'] as Record<string, unknown>)[key]) ===
            JSON.stringify(value),
        ),
      )
      .slice(body.offset, body.offset + body.limit);
  });
  route('post', '/assistants/:id/latest', async (req, caller) => {
    const { version } = parsePart(LatestSchema, req.body, 'body');
    const { assistant } = await assistants.stored(idOf(req), caller.scope);
    const changed = await store.setLatest(assistant.assistant_id, version, caller.scope);
    return (await assistants.get(changed.id, caller.scope)).assistant;
  });
  route('get', '/assistants/:id/graph', async (req, caller) => {
    const { xray } = parsePart(z.object({ xray: XRay }).strict(), req.query, 'query');
    const found = await assistants.get(idOf(req), caller.scope);
    return drawGraph(found.target, xray);
  });
  // LangGraph's server reads an optional `config` body on this GET; the schemas here do not
  // depend on a run's config (a factory graph is described as loaded at start).
  route('get', '/assistants/:id/schemas', async (req, caller) => {
    const found = await assistants.get(idOf(req), caller.scope);
    return schemasView(found.assistant.graph_id, assistantSchemas(found.target));
  });
  const subgraphs = async (req: Request, caller: Caller) => {
    const { namespace } = parsePart(
      z.object({ id: z.string(), namespace: z.string().min(1).optional() }),
      req.params,
      'path',
    );
    const { recurse } = parsePart(z.object({ recurse: Flag }).strict(), req.query, 'query');
    const found = await assistants.get(idOf(req), caller.scope);
    return subgraphSchemas(found.target, namespace, recurse);
  };
  route('get', '/assistants/:id/subgraphs', subgraphs);
  route('get', '/assistants/:id/subgraphs/:namespace', subgraphs);
}

/** `POST /assistants`: a stored assistant of the caller's tenant, at version 1. */
async function create(
  assistants: Assistants,
  body: z.output<typeof AssistantCreateSchema>,
  scope: Scope,
): Promise<Assistant> {
  await assistants.checkGraph(body.graph_id, 'body.graph_id');
  const id = body.assistant_id ?? randomUUID();
  const exists = () => new LangGraphHttpError(409, 'Assistant already exists');
  const existing = await assistants.get(id, scope).catch((error: unknown) => {
    if (error instanceof LangGraphHttpError && error.status === 404) return null;
    throw error;
  });
  if (existing) {
    if (body.if_exists === 'do_nothing') return existing.assistant;
    throw exists();
  }
  try {
    await assistants.store.create(
      {
        id,
        graphId: body.graph_id,
        name: body.name ?? body.graph_id,
        description: body.description ?? null,
        config: body.config ?? {},
        context: body.context ?? {},
        metadata: body.metadata ?? {},
      },
      scope,
    );
  } catch (error) {
    // Taken meanwhile, or by another tenant (whose assistant this caller must not see).
    if (isStorageError(error) && error.code === 'CONFLICT') throw exists();
    throw error;
  }
  return (await assistants.get(id, scope)).assistant;
}

function systemVersion(assistant: Assistant): Record<string, unknown> {
  const { updated_at: _updated, ...version } = assistant;
  return version;
}
