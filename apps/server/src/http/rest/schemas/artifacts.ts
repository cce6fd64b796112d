import type { Artifact, ArtifactVersion, ArtifactWithContent } from '@cognition/contracts';
import {
  ArtifactEncodingSchema,
  ArtifactNameSchema,
  ArtifactTypeSchema,
  ArtifactVisibilitySchema,
  IdSchema,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  StringMapSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { queryInt } from './common';

/* The artifact routes' wire shapes (snake_case), validated on requests and published in OpenAPI. */

const ContentTypeBody = z
  .string()
  .min(1)
  .max(255)
  .meta({ description: 'Media type of the content, e.g. text/markdown' });

export const CreateArtifactBody = z
  .object({
    name: ArtifactNameSchema,
    type: ArtifactTypeSchema.optional().meta({ description: 'Default `artifact`' }),
    visibility: ArtifactVisibilitySchema.optional().meta({ description: 'Default `private`' }),
    content: z.string().meta({ description: 'Text, or base64 when `encoding` is `base64`' }),
    encoding: ArtifactEncodingSchema.optional().meta({ description: 'Default `utf8`' }),
    content_type: ContentTypeBody.optional(),
    session_id: IdSchema.nullable().optional(),
    run_id: IdSchema.nullable().optional(),
    metadata: StringMapSchema.optional(),
  })
  .strict()
  .meta({ id: 'CreateArtifact' });

export const UpdateArtifactBody = z
  .object({
    content: z.string().optional(),
    encoding: ArtifactEncodingSchema.optional(),
    content_type: ContentTypeBody.optional(),
    metadata: StringMapSchema.optional().meta({ description: 'Replaces the metadata whole' }),
    expected_version: z.number().int().min(1).optional().meta({
      description: 'Write only if the artifact is still at this version (409 otherwise)',
    }),
  })
  .strict()
  .meta({ id: 'UpdateArtifact' });

const artifactFields = {
  id: IdSchema,
  name: z.string(),
  type: ArtifactTypeSchema,
  visibility: ArtifactVisibilitySchema,
  content_type: z.string(),
  encoding: ArtifactEncodingSchema,
  size: z.number().int(),
  sha256: z.string(),
  version: z.number().int(),
  session_id: IdSchema.nullable(),
  run_id: IdSchema.nullable(),
  metadata: StringMapSchema,
  scopes: StringMapSchema,
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
};

export const ArtifactBody = z.object(artifactFields).meta({ id: 'Artifact' });
export const ArtifactContentBody = z
  .object({ ...artifactFields, content: z.string() })
  .meta({ id: 'ArtifactWithContent' });
export const ArtifactListBody = z
  .object({ artifacts: z.array(ArtifactBody), total: z.number().int().min(0) })
  .meta({ id: 'ArtifactList' });
const ArtifactVersionBody = z
  .object({
    artifact_id: IdSchema,
    version: z.number().int(),
    content_type: z.string(),
    encoding: ArtifactEncodingSchema,
    size: z.number().int(),
    sha256: z.string(),
    created_by: z.string(),
    created_at: z.string(),
  })
  .meta({ id: 'ArtifactVersion' });
export const ArtifactVersionListBody = z
  .object({ versions: z.array(ArtifactVersionBody) })
  .meta({ id: 'ArtifactVersionList' });

const pageQuery = {
  type: ArtifactTypeSchema.optional(),
  visibility: ArtifactVisibilitySchema.optional(),
  name: ArtifactNameSchema.optional(),
  limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
  offset: queryInt(0, 1_000_000_000, 'Artifacts to skip (default 0)').optional(),
};

/** `GET /sessions/{id}/artifacts`: the session is the path's. */
export const ListSessionArtifactsQuery = z.object(pageQuery).strict();
export const ListArtifactsQuery = z
  .object({ ...pageQuery, session_id: IdSchema.optional() })
  .strict();

export const ArtifactIdParams = z.object({ id: IdSchema.meta({ description: 'Artifact id' }) });
export const GetArtifactQuery = z
  .object({ version: queryInt(1, 1_000_000_000, 'A kept version (default: current)').optional() })
  .strict();

export function artifactToBody(artifact: Artifact): z.infer<typeof ArtifactBody> {
  return {
    id: artifact.id,
    name: artifact.name,
    type: artifact.type,
    visibility: artifact.visibility,
    content_type: artifact.contentType,
    encoding: artifact.encoding,
    size: artifact.size,
    sha256: artifact.sha256,
    version: artifact.version,
    session_id: artifact.sessionId,
    run_id: artifact.runId,
    metadata: artifact.metadata,
    scopes: artifact.scopes,
    created_by: artifact.createdBy,
    created_at: artifact.createdAt.toISOString(),
    updated_at: artifact.updatedAt.toISOString(),
  };
}

export function artifactContentToBody(
  artifact: ArtifactWithContent,
): z.infer<typeof ArtifactContentBody> {
  return { ...artifactToBody(artifact), content: artifact.content };
}

export function versionToBody(version: ArtifactVersion): z.infer<typeof ArtifactVersionBody> {
  return {
    artifact_id: version.artifactId,
    version: version.version,
    content_type: version.contentType,
    encoding: version.encoding,
    size: version.size,
    sha256: version.sha256,
    created_by: version.createdBy,
    created_at: version.createdAt.toISOString(),
  };
}
