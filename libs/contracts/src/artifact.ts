import { z } from 'zod';
import { IdSchema, PageQuerySchema, StringMapSchema } from './common';

/**
 * What an artifact is for.
 * - `scratch`: working files of one run, deleted when the run ends (kept when it failed, until
 *   its session goes);
 * - `memory` / `policy`: given to the agent at the start of every turn of a session of the same
 *   scope (policy as instructions, memory as notes);
 * - `artifact`, `contract`, `eval`: plain durable documents.
 */
export const ArtifactTypeSchema = z.enum([
  'scratch',
  'artifact',
  'contract',
  'eval',
  'memory',
  'policy',
]);
export type ArtifactType = z.infer<typeof ArtifactTypeSchema>;

/**
 * Who sees an artifact. Whatever the visibility, a caller of another scope never does.
 * - `private`: its session's agent, and API clients of its scope;
 * - `run`: the run that made it, and API clients of its scope;
 * - `public`: every session of its scope.
 */
export const ArtifactVisibilitySchema = z.enum(['private', 'run', 'public']);
export type ArtifactVisibility = z.infer<typeof ArtifactVisibilitySchema>;

/** How `content` travels over JSON: UTF-8 text, or bytes as standard base64. */
export const ArtifactEncodingSchema = z.enum(['utf8', 'base64']);
export type ArtifactEncoding = z.infer<typeof ArtifactEncodingSchema>;

/** Default `COGNITION_ARTIFACT_MAX_BYTES`: 10 MiB of decoded content. */
export const ARTIFACT_MAX_BYTES_DEFAULT = 10 * 1024 * 1024;

export const ArtifactNameSchema = z
  .string()
  .min(1)
  .max(256)
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'names have no control characters');

const ContentTypeSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a media type such as text/markdown');

/**
 * Standard base64 with padding. No grouped repetition: a backtracking regex over a group recurses
 * per repetition and overflows the stack on multi-megabyte content.
 */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_CHARS.test(text);
}

/**
 * An artifact's current state. `version` is 1 on create and grows by one on every content change
 * (a metadata-only change keeps it); `size` (decoded bytes) and `sha256` (hex) describe the
 * current version's content. `scopes` are the creating caller's, never from a request body.
 */
export const ArtifactSchema = z.object({
  id: IdSchema,
  name: ArtifactNameSchema,
  type: ArtifactTypeSchema,
  visibility: ArtifactVisibilitySchema,
  contentType: z.string(),
  encoding: ArtifactEncodingSchema,
  size: z.number().int().min(0),
  sha256: z.string(),
  version: z.number().int().min(1),
  sessionId: IdSchema.nullable(),
  runId: IdSchema.nullable(),
  metadata: StringMapSchema,
  scopes: StringMapSchema,
  createdBy: z.string(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type Artifact = z.infer<typeof ArtifactSchema>;

/**
 * An artifact with the content of one version (the current one unless a version was asked);
 * `version`, `contentType`, `encoding`, `size` and `sha256` then describe that version.
 */
export type ArtifactWithContent = Artifact & { content: string };

/** One kept version: its content's description (and, when read, the content). */
export const ArtifactVersionSchema = z.object({
  artifactId: IdSchema,
  version: z.number().int().min(1),
  contentType: z.string(),
  encoding: ArtifactEncodingSchema,
  size: z.number().int().min(0),
  sha256: z.string(),
  createdBy: z.string(),
  createdAt: z.date(),
});
export type ArtifactVersion = z.infer<typeof ArtifactVersionSchema>;

function refineContent(
  value: { content?: string | undefined; encoding?: ArtifactEncoding | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.content !== undefined && value.encoding === 'base64' && !isBase64(value.content)) {
    ctx.addIssue({ code: 'custom', path: ['content'], message: 'not valid base64' });
  }
}

const CreateArtifactBodySchema = z
  .object({
    name: ArtifactNameSchema,
    type: ArtifactTypeSchema.default('artifact'),
    visibility: ArtifactVisibilitySchema.default('private'),
    content: z.string(),
    encoding: ArtifactEncodingSchema.default('utf8'),
    contentType: ContentTypeSchema.optional(),
    sessionId: IdSchema.nullable().optional(),
    runId: IdSchema.nullable().optional(),
    metadata: StringMapSchema.default({}),
  })
  .strict();

function refineCreate(value: z.output<typeof CreateArtifactBodySchema>, ctx: z.RefinementCtx) {
  refineContent(value, ctx);
  if (value.visibility !== 'public' && !value.sessionId) {
    ctx.addIssue({
      code: 'custom',
      path: ['sessionId'],
      message: `a ${value.visibility} artifact belongs to a session`,
    });
  }
  if (value.visibility === 'run' && !value.runId) {
    ctx.addIssue({ code: 'custom', path: ['runId'], message: 'a run artifact belongs to a run' });
  }
  if (value.runId && !value.sessionId) {
    ctx.addIssue({ code: 'custom', path: ['sessionId'], message: 'a run belongs to a session' });
  }
}

/** Input of ArtifactStore.create (REST body, tRPC input). */
export const CreateArtifactInputSchema = CreateArtifactBodySchema.superRefine(refineCreate);
export type CreateArtifactInput = z.input<typeof CreateArtifactBodySchema>;

/**
 * Input of ArtifactStore.update. A content change (other bytes, encoding or content type) makes
 * a new version; `metadata` alone (replaced whole) does not. `expectedVersion`, when given, makes
 * the write conditional on the stored version (VERSION_CONFLICT otherwise).
 */
/** The fields of an update, without its cross-field rules (extend it, then `refineArtifactUpdate`). */
export const UpdateArtifactFieldsSchema = z
  .object({
    content: z.string().optional(),
    encoding: ArtifactEncodingSchema.optional(),
    contentType: ContentTypeSchema.optional(),
    metadata: StringMapSchema.optional(),
    expectedVersion: z.number().int().min(1).optional(),
  })
  .strict();

export function refineArtifactUpdate(
  value: { content?: string | undefined; encoding?: ArtifactEncoding | undefined },
  ctx: z.RefinementCtx,
): void {
  refineContent(value, ctx);
  if (value.encoding !== undefined && value.content === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['content'],
      message: 'an encoding comes with its content',
    });
  }
}

export const UpdateArtifactInputSchema =
  UpdateArtifactFieldsSchema.superRefine(refineArtifactUpdate);
export type UpdateArtifactInput = z.input<typeof UpdateArtifactInputSchema>;

/** Filters of a list (all must match), newest `updatedAt` first. */
export const ListArtifactsQuerySchema = PageQuerySchema.extend({
  type: ArtifactTypeSchema.optional(),
  visibility: ArtifactVisibilitySchema.optional(),
  sessionId: IdSchema.optional(),
  name: ArtifactNameSchema.optional(),
  metadata: StringMapSchema.optional(),
}).strict();
export type ListArtifactsQuery = z.input<typeof ListArtifactsQuerySchema>;

export interface ArtifactPage {
  artifacts: Artifact[];
  total: number;
}
