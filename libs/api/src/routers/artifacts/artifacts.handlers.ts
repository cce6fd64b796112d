import type {
  Artifact,
  ArtifactPage,
  ArtifactVersion,
  ArtifactWithContent,
} from '@cognition/contracts';
import type { ArtifactAccess } from '@cognition/storage';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type {
  ArtifactIdInput,
  CreateArtifactApiInput,
  GetArtifactApiInput,
  ListArtifactsApiInput,
  UpdateArtifactApiInput,
} from './schemas';

/** API clients see every artifact of their scope, whatever its visibility. */
function accessOf(ctx: ApiContext): ArtifactAccess {
  return { scope: ctx.caller.scope };
}

function notFound(id: string, version?: number): ApiError {
  return new ApiError(
    'NOT_FOUND',
    version === undefined
      ? `Artifact not found: ${id}`
      : `Artifact not found: ${id} (version ${version})`,
  );
}

/** Scopes come from the caller, never the body; `sessionId` must be a session of that scope. */
export function createArtifactHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: CreateArtifactApiInput;
}): Promise<ArtifactWithContent> {
  return ctx.services.storage.artifacts.create(input, accessOf(ctx));
}

export function listArtifactsHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ListArtifactsApiInput;
}): Promise<ArtifactPage> {
  return ctx.services.storage.artifacts.list(input, accessOf(ctx));
}

/** The current version, or `version`; 404 when missing, outside the scope, or no such version. */
export async function getArtifactHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: GetArtifactApiInput;
}): Promise<ArtifactWithContent> {
  const artifact = await ctx.services.storage.artifacts.get(input.id, accessOf(ctx), input.version);
  if (!artifact) throw notFound(input.id, input.version);
  return artifact;
}

/** A content change makes a new version; a stale `expectedVersion` is 409 VERSION_CONFLICT. */
export function updateArtifactHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: UpdateArtifactApiInput;
}): Promise<Artifact> {
  const { id, ...update } = input;
  return ctx.services.storage.artifacts.update(id, update, accessOf(ctx));
}

export async function deleteArtifactHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ArtifactIdInput;
}): Promise<{ deleted: true }> {
  if (!(await ctx.services.storage.artifacts.delete(input.id, accessOf(ctx)))) {
    throw notFound(input.id);
  }
  return { deleted: true };
}

/** Every kept version (without content), oldest first. */
export async function artifactVersionsHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ArtifactIdInput;
}): Promise<ArtifactVersion[]> {
  const versions = await ctx.services.storage.artifacts.listVersions(input.id, accessOf(ctx));
  if (!versions) throw notFound(input.id);
  return versions;
}
