import { createHash } from 'node:crypto';
import type {
  Artifact,
  ArtifactEncoding,
  ArtifactPage,
  ArtifactVersion,
  ArtifactWithContent,
  CreateArtifactInput,
  ListArtifactsQuery,
  UpdateArtifactInput,
} from '@cognition/contracts';
import { ARTIFACT_MAX_BYTES_DEFAULT } from '@cognition/contracts';
import { StorageError } from '../errors';
import type { Scope } from '../scope';
import { scopeMatches } from '../scope';

/**
 * Who is asking. API clients (`agent` absent) see every artifact of their scope. An agent's
 * tools (`agent` set) see, within the scope, the public artifacts, the private ones of their
 * session and the run ones of their run. Writes are recorded as made by `api` or `run:<runId>`.
 */
export interface ArtifactAccess {
  scope: Scope;
  agent?: { sessionId: string; runId: string };
}

/**
 * Durable, versioned, scope-aware files. Every method treats an artifact the caller may not see
 * (another scope, or a visibility that excludes the agent) exactly like a missing one.
 *
 * Invariants (proved by the conformance suite):
 * - names are unique per scope and session for `private`/`run` artifacts, per scope for
 *   `public` ones (CONFLICT otherwise);
 * - `version` is 1 on create and +1 on every content change; every version's content is kept
 *   and readable; a metadata-only change keeps the version;
 * - an update with `expectedVersion` is checked and written atomically: of concurrent writers at
 *   one version exactly one wins, the others get VERSION_CONFLICT;
 * - content above the backend's `maxBytes` (decoded) is PAYLOAD_TOO_LARGE; bytes round-trip
 *   exactly (base64 in, the same base64 out);
 * - deleting a session deletes its `private` and `run` artifacts; `public` ones stay.
 */
export interface ArtifactStore {
  /** SESSION_NOT_FOUND when `sessionId` is not a session of the caller's scope; RUN_NOT_FOUND when `runId` is not a run of it. */
  create(input: CreateArtifactInput, access: ArtifactAccess): Promise<ArtifactWithContent>;
  /** The current version, or `version`; null when missing, not visible, or no such version. */
  get(id: string, access: ArtifactAccess, version?: number): Promise<ArtifactWithContent | null>;
  list(query: ListArtifactsQuery, access: ArtifactAccess): Promise<ArtifactPage>;
  /** NOT_FOUND, VERSION_CONFLICT, PAYLOAD_TOO_LARGE, VALIDATION_ERROR. */
  update(id: string, input: UpdateArtifactInput, access: ArtifactAccess): Promise<Artifact>;
  /** false when missing or not visible. */
  delete(id: string, access: ArtifactAccess): Promise<boolean>;
  /** Every kept version, oldest first; null when the artifact is missing or not visible. */
  listVersions(id: string, access: ArtifactAccess): Promise<ArtifactVersion[] | null>;
  /** Deletes the `scratch` artifacts a run made (called when the run ends well); how many. */
  deleteScratch(runId: string): Promise<number>;
}

export interface ArtifactStoreOptions {
  /** Largest decoded content accepted; default {@link ARTIFACT_MAX_BYTES_DEFAULT}. */
  maxBytes?: number;
}

export function artifactMaxBytes(options: ArtifactStoreOptions | undefined): number {
  return options?.maxBytes ?? ARTIFACT_MAX_BYTES_DEFAULT;
}

/** The actor recorded as `createdBy`. */
export function artifactActor(access: ArtifactAccess): string {
  return access.agent ? `run:${access.agent.runId}` : 'api';
}

/** Whether `access` may see an artifact (scope first, then visibility for agents). */
export function artifactVisibleTo(
  artifact: Pick<Artifact, 'scopes' | 'visibility' | 'sessionId' | 'runId'>,
  access: ArtifactAccess,
): boolean {
  if (!scopeMatches(access.scope, artifact.scopes)) return false;
  const agent = access.agent;
  if (!agent) return true;
  switch (artifact.visibility) {
    case 'public':
      return true;
    case 'private':
      return artifact.sessionId === agent.sessionId;
    case 'run':
      return artifact.runId === agent.runId;
  }
}

/**
 * One canonical string per scope map (sorted, percent-encoded keys and values), so "unique per
 * scope" is a plain unique index.
 */
export function artifactScopeKey(scope: Scope): string {
  return Object.keys(scope)
    .sort()
    .map((key) => `${encodeURIComponent(key)}=${encodeURIComponent(scope[key] ?? '')}`)
    .join('&');
}

/** Who owns a name: '' for public artifacts (unique per scope), else the session id. */
export function artifactNameOwner(visibility: Artifact['visibility'], sessionId: string | null) {
  return visibility === 'public' ? '' : (sessionId ?? '');
}

export interface EncodedContent {
  bytes: Buffer;
  size: number;
  sha256: string;
}

/** Decodes request content to bytes and checks the size limit (PAYLOAD_TOO_LARGE). */
export function encodeArtifactContent(
  content: string,
  encoding: ArtifactEncoding,
  maxBytes: number,
): EncodedContent {
  const bytes = Buffer.from(content, encoding === 'base64' ? 'base64' : 'utf8');
  if (bytes.length > maxBytes) {
    throw new StorageError(
      'PAYLOAD_TOO_LARGE',
      `Artifact content is ${bytes.length} bytes; the limit is ${maxBytes}`,
      { issues: [{ path: 'content', message: `larger than ${maxBytes} bytes` }] },
    );
  }
  return {
    bytes,
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}

export function decodeArtifactContent(bytes: Uint8Array, encoding: ArtifactEncoding): string {
  return Buffer.from(bytes).toString(encoding === 'base64' ? 'base64' : 'utf8');
}

export function defaultContentType(encoding: ArtifactEncoding): string {
  return encoding === 'base64' ? 'application/octet-stream' : 'text/plain';
}

export function artifactNotFound(id: string): StorageError {
  return new StorageError('NOT_FOUND', `Artifact not found: ${id}`);
}
