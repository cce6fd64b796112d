import type { Artifact, ArtifactWithContent } from '@cognition/contracts';
import {
  ArtifactEncodingSchema,
  ArtifactNameSchema,
  ArtifactTypeSchema,
  ArtifactVisibilitySchema,
} from '@cognition/contracts';
import { isStorageError } from '@cognition/storage';
import { z } from 'zod';
import type { ArtifactToolContext, RuntimeTool, ToolContext, ToolResult } from './types';
import { capOutput, defineTool } from './types';

/**
 * The artifact types an agent may write. `policy` is left to operators (through the API): a
 * policy is given to every later turn as instructions, so an agent writing its own would let one
 * conversation steer all the others.
 */
const AGENT_ARTIFACT_TYPES = ['scratch', 'artifact', 'contract', 'eval', 'memory'] as const;

const UNAVAILABLE: ToolResult = { output: 'Artifacts are not available in this run.', exitCode: 1 };

function describe(a: Artifact): string {
  const session = a.sessionId === null ? '' : ` session=${a.sessionId}`;
  return `${a.id}  ${a.name}  type=${a.type} visibility=${a.visibility} v${a.version} ${a.size}B ${a.contentType}${session}`;
}

function failure(error: unknown): ToolResult {
  if (isStorageError(error)) {
    const fields = (error.details.issues ?? []).map((i) => `${i.path}: ${i.message}`).join('; ');
    return { output: `${error.code}: ${fields || error.message}`, exitCode: 1 };
  }
  throw error;
}

function emitArtifact(
  ctx: ToolContext,
  a: Artifact,
  action: 'listed' | 'read' | 'created' | 'updated',
) {
  ctx.emit({
    type: 'artifact',
    id: a.id,
    name: a.name,
    artifact_type: a.type,
    version: a.version,
    action,
  });
}

function withArtifacts(
  ctx: ToolContext,
  fn: (artifacts: ArtifactToolContext) => Promise<ToolResult>,
): Promise<ToolResult> {
  const artifacts = ctx.artifacts;
  if (!artifacts) return Promise.resolve(UNAVAILABLE);
  return fn(artifacts).catch(failure);
}

const artifactListTool = defineTool({
  name: 'artifact_list',
  idempotent: true,
  description:
    'List the artifacts you can see: public ones of this workspace scope, private ones of this session and the run ones of this run. Filter by type, visibility or exact name.',
  schema: z.strictObject({
    type: ArtifactTypeSchema.optional(),
    visibility: ArtifactVisibilitySchema.optional(),
    name: ArtifactNameSchema.optional(),
    limit: z.number().int().min(1).max(100).optional(),
  }),
  run(args, ctx) {
    return withArtifacts(ctx, async ({ store, access }) => {
      const page = await store.list({ ...args, limit: args.limit ?? 50 }, access);
      for (const a of page.artifacts) emitArtifact(ctx, a, 'listed');
      if (page.total === 0) return { output: 'No artifacts.', exitCode: 0 };
      const more = page.total > page.artifacts.length ? `\n(${page.total} in all)` : '';
      return { output: page.artifacts.map(describe).join('\n') + more, exitCode: 0 };
    });
  },
});

const artifactReadTool = defineTool({
  name: 'artifact_read',
  idempotent: true,
  description:
    'Read an artifact by id or by name (the current version, or `version`). Binary content comes back as base64.',
  schema: z
    .strictObject({
      id: z.string().min(1).optional(),
      name: ArtifactNameSchema.optional(),
      version: z.number().int().min(1).optional(),
    })
    .refine(
      (a) => (a.id === undefined) !== (a.name === undefined),
      'give exactly one of id and name',
    ),
  run(args, ctx) {
    return withArtifacts(ctx, async ({ store, access }) => {
      let id = args.id;
      if (id === undefined) {
        const found = await store.list({ name: args.name, limit: 1 }, access);
        id = found.artifacts[0]?.id;
      }
      const artifact: ArtifactWithContent | null =
        id === undefined ? null : await store.get(id, access, args.version);
      if (!artifact) {
        const what = args.id ?? args.name ?? '';
        const version = args.version === undefined ? '' : ` (version ${args.version})`;
        return { output: `No artifact ${what}${version} visible to this run.`, exitCode: 1 };
      }
      emitArtifact(ctx, artifact, 'read');
      const header = `${describe(artifact)} encoding=${artifact.encoding}\n\n`;
      return { output: capOutput(header + artifact.content), exitCode: 0 };
    });
  },
});

const artifactWriteTool = defineTool({
  name: 'artifact_write',
  // A second write of a cut-off call could add a version or hit the name it just took.
  idempotent: false,
  description:
    'Create an artifact, or write a new version of the one with this name and visibility. `private` (default): this session only; `run`: this run only; `public`: every session of this workspace scope. Type `scratch` is deleted when the run ends well; `memory` artifacts are shown to every later turn as notes. Pass expected_version to refuse the write if someone else wrote first.',
  schema: z.strictObject({
    name: ArtifactNameSchema,
    content: z.string(),
    type: z.enum(AGENT_ARTIFACT_TYPES).optional(),
    visibility: ArtifactVisibilitySchema.optional(),
    encoding: ArtifactEncodingSchema.optional(),
    content_type: z.string().min(1).max(255).optional(),
    expected_version: z.number().int().min(1).optional(),
  }),
  run(args, ctx) {
    return withArtifacts(ctx, async ({ store, access }) => {
      const visibility = args.visibility ?? 'private';
      const agent = access.agent;
      const existing = (await store.list({ name: args.name, visibility }, access)).artifacts.find(
        (a) => visibility === 'public' || a.sessionId === agent?.sessionId,
      );
      const content = {
        content: args.content,
        ...(args.encoding !== undefined ? { encoding: args.encoding } : {}),
        ...(args.content_type !== undefined ? { contentType: args.content_type } : {}),
      };
      if (existing) {
        if (args.type !== undefined && args.type !== existing.type) {
          return {
            output: `An artifact named ${args.name} exists with type ${existing.type}; types do not change.`,
            exitCode: 1,
          };
        }
        const updated = await store.update(
          existing.id,
          {
            ...content,
            ...(args.expected_version !== undefined
              ? { expectedVersion: args.expected_version }
              : {}),
          },
          access,
        );
        emitArtifact(ctx, updated, 'updated');
        return { output: `Updated ${describe(updated)}`, exitCode: 0 };
      }
      if (args.expected_version !== undefined) {
        return {
          output: `No artifact ${args.name} to update (expected_version given).`,
          exitCode: 1,
        };
      }
      const created = await store.create(
        {
          name: args.name,
          type: args.type ?? 'artifact',
          visibility,
          ...content,
          sessionId: agent?.sessionId ?? null,
          runId: agent?.runId ?? null,
        },
        access,
      );
      emitArtifact(ctx, created, 'created');
      return { output: `Created ${describe(created)}`, exitCode: 0 };
    });
  },
});

export const ARTIFACT_TOOLS: readonly RuntimeTool[] = [
  artifactListTool,
  artifactReadTool,
  artifactWriteTool,
];
