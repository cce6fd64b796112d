import type { ListArtifactsQuery as ListQuery, StringMap } from '@cognition/contracts';
import { ApiError } from '@cognition/api';
import type { z } from 'zod';
import {
  ArtifactBody,
  ArtifactContentBody,
  ArtifactIdParams,
  ArtifactListBody,
  artifactContentToBody,
  artifactToBody,
  ArtifactVersionListBody,
  CreateArtifactBody,
  GetArtifactQuery,
  ListArtifactsQuery,
  ListSessionArtifactsQuery,
  UpdateArtifactBody,
  versionToBody,
} from '../schemas/artifacts';
import { CALLER_ERRORS, errorResponse, INVALID } from '../responses';
import type { ApiCaller, RestRoute } from '../route';
import { defineRoute } from '../route';
import { METADATA_QUERY_PREFIX, SessionIdParams } from '../schemas/common';

const NOT_FOUND = errorResponse("Artifact not found (or outside the caller's scope)");
const BODY_ERRORS = {
  400: errorResponse('Malformed JSON body'),
  413: errorResponse('Content larger than COGNITION_ARTIFACT_MAX_BYTES (or the body limit)'),
};
const LIST_DESCRIPTION =
  'Newest `updated_at` first. Filter by `type`, `visibility`, `name` and metadata ' +
  '(`metadata.<key>=<value>`, all must match); page with `limit` and `offset`.';

type PageQuery = z.output<typeof ListSessionArtifactsQuery>;

async function listPage(
  api: ApiCaller,
  query: PageQuery,
  sessionId: string | undefined,
  extraQuery: Record<string, string | string[]>,
) {
  const metadata: StringMap = {};
  for (const [name, value] of Object.entries(extraQuery)) {
    if (Array.isArray(value)) {
      throw new ApiError('VALIDATION_ERROR', `Query parameter ${name} was given more than once`, {
        issues: [{ path: `query.${name}`, message: 'given more than once' }],
      });
    }
    metadata[name.slice(METADATA_QUERY_PREFIX.length)] = value;
  }
  const input: ListQuery = {
    ...query,
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
  const page = await api.artifacts.list(input);
  return {
    status: 200,
    body: { artifacts: page.artifacts.map(artifactToBody), total: page.total },
  };
}

/** Durable, versioned, scope-aware files (docs/artifacts.md), over the `artifacts.*` procedures. */
export const ARTIFACT_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'get',
    path: '/artifacts',
    operationId: 'listArtifacts',
    summary: 'List artifacts',
    description: `Artifacts of the caller's scope. ${LIST_DESCRIPTION} \`session_id\` narrows to one session's.`,
    tag: 'artifacts',
    caller: 'required',
    request: { query: ListArtifactsQuery, extraQueryPrefix: METADATA_QUERY_PREFIX },
    responses: {
      200: { description: 'One page of artifacts and the total', schema: ArtifactListBody },
      ...CALLER_ERRORS,
      422: INVALID,
    },
    handle({ api, query, extraQuery }) {
      const { session_id: sessionId, ...page } = query;
      return listPage(api, page, sessionId, extraQuery);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/artifacts',
    operationId: 'createArtifact',
    summary: 'Create an artifact',
    description:
      "Version 1 of a new artifact in the caller's scope. `private` and `run` artifacts name " +
      'their `session_id` (and `run_id`); names are unique per scope and session, or per scope ' +
      'for `public` ones (409).',
    tag: 'artifacts',
    caller: 'required',
    request: {
      body: CreateArtifactBody,
      bodyLimit: 'artifact',
      examples: {
        text: { name: 'style-guide.md', type: 'policy', visibility: 'public', content: '# Rules' },
        binary: {
          name: 'logo.png',
          visibility: 'public',
          encoding: 'base64',
          content_type: 'image/png',
          content: 'iVBORw0KGgo=',
        },
      },
    },
    responses: {
      201: { description: 'The created artifact', schema: ArtifactContentBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: errorResponse('session_id or run_id not found in the caller scope'),
      409: errorResponse('The name is taken'),
      422: INVALID,
    },
    async handle({ api, body }) {
      const artifact = await api.artifacts.create({
        name: body.name,
        content: body.content,
        ...(body.type !== undefined ? { type: body.type } : {}),
        ...(body.visibility !== undefined ? { visibility: body.visibility } : {}),
        ...(body.encoding !== undefined ? { encoding: body.encoding } : {}),
        ...(body.content_type !== undefined ? { contentType: body.content_type } : {}),
        ...(body.session_id !== undefined ? { sessionId: body.session_id } : {}),
        ...(body.run_id !== undefined ? { runId: body.run_id } : {}),
        ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
      });
      return { status: 201, body: artifactContentToBody(artifact) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/artifacts/{id}',
    operationId: 'getArtifact',
    summary: 'Get an artifact with its content',
    description: 'The current version, or `?version=N` (every version is kept).',
    tag: 'artifacts',
    caller: 'required',
    request: { params: ArtifactIdParams, query: GetArtifactQuery },
    responses: {
      200: { description: 'The artifact and its content', schema: ArtifactContentBody },
      ...CALLER_ERRORS,
      404: NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const artifact = await api.artifacts.get({
        id: params.id,
        ...(query.version !== undefined ? { version: query.version } : {}),
      });
      return { status: 200, body: artifactContentToBody(artifact) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/artifacts/{id}',
    operationId: 'updateArtifact',
    summary: 'Update an artifact',
    description:
      'New content (a new version when it differs) and/or metadata (replaced whole, no new ' +
      'version). With `expected_version`, the write applies only if the artifact is still at ' +
      'that version (409 `VERSION_CONFLICT` otherwise).',
    tag: 'artifacts',
    caller: 'required',
    request: {
      params: ArtifactIdParams,
      body: UpdateArtifactBody,
      bodyLimit: 'artifact',
      examples: { content: { content: '# Rules v2', expected_version: 1 } },
    },
    responses: {
      200: { description: 'The artifact (without content)', schema: ArtifactBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: NOT_FOUND,
      409: errorResponse('expected_version differs from the stored version'),
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const artifact = await api.artifacts.update({
        id: params.id,
        ...(body.content !== undefined ? { content: body.content } : {}),
        ...(body.encoding !== undefined ? { encoding: body.encoding } : {}),
        ...(body.content_type !== undefined ? { contentType: body.content_type } : {}),
        ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
        ...(body.expected_version !== undefined ? { expectedVersion: body.expected_version } : {}),
      });
      return { status: 200, body: artifactToBody(artifact) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/artifacts/{id}',
    operationId: 'deleteArtifact',
    summary: 'Delete an artifact and all its versions',
    tag: 'artifacts',
    caller: 'required',
    request: { params: ArtifactIdParams },
    responses: { 204: { description: 'Deleted' }, ...CALLER_ERRORS, 404: NOT_FOUND, 422: INVALID },
    async handle({ api, params }) {
      await api.artifacts.delete({ id: params.id });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/artifacts/{id}/versions',
    operationId: 'listArtifactVersions',
    summary: "List an artifact's versions",
    description: 'Every kept version, oldest first, without content.',
    tag: 'artifacts',
    caller: 'required',
    request: { params: ArtifactIdParams },
    responses: {
      200: { description: 'The versions', schema: ArtifactVersionListBody },
      ...CALLER_ERRORS,
      404: NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params }) {
      const versions = await api.artifacts.versions({ id: params.id });
      return { status: 200, body: { versions: versions.map(versionToBody) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/artifacts',
    operationId: 'listSessionArtifacts',
    summary: 'List the artifacts of a session',
    description: `The artifacts whose \`session_id\` is this session. ${LIST_DESCRIPTION}`,
    tag: 'artifacts',
    caller: 'required',
    request: {
      params: SessionIdParams,
      query: ListSessionArtifactsQuery,
      extraQueryPrefix: METADATA_QUERY_PREFIX,
    },
    responses: {
      200: { description: 'One page of artifacts and the total', schema: ArtifactListBody },
      ...CALLER_ERRORS,
      404: errorResponse("Session not found (or outside the caller's scope)"),
      422: INVALID,
    },
    async handle({ api, params, query, extraQuery }) {
      await api.sessions.get({ id: params.id });
      return listPage(api, query, params.id, extraQuery);
    },
  }),
];
