import { z } from 'zod';
import type { Scope } from '../scope';

/** A JSON object (config, context, metadata): any JSON inside, round-tripped exactly. */
const JsonObjectSchema = z.record(z.string(), z.unknown());

/** What an assistant version holds: the graph it runs and how. */
export const AssistantFieldsSchema = z.strictObject({
  graphId: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  description: z.string().max(2000).nullable(),
  config: JsonObjectSchema,
  context: JsonObjectSchema,
  metadata: JsonObjectSchema,
});
export type AssistantFields = z.output<typeof AssistantFieldsSchema>;

export const NewAssistantSchema = AssistantFieldsSchema.extend({
  id: z.string().min(1).max(200),
});
export type NewAssistant = z.input<typeof NewAssistantSchema>;

/**
 * A patch: the fields given replace the latest version's, except `metadata`, whose keys are
 * merged into it (LangGraph's semantics: a patch adds or replaces keys, never drops one).
 */
export const AssistantPatchSchema = AssistantFieldsSchema.partial();
export type AssistantPatch = z.input<typeof AssistantPatchSchema>;

/** One stored version of an assistant (versions are immutable once written). */
export interface AssistantVersion extends AssistantFields {
  assistantId: string;
  version: number;
  createdAt: Date;
}

/** An assistant: the fields of its current version (`version`), with its tenant scope. */
export interface StoredAssistant extends AssistantFields {
  id: string;
  version: number;
  scope: Scope;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Assistants made through the LangGraph API (docs/langgraph-api.md), per tenant, each with its
 * versions. The system assistants (one per graph) are not stored: they are derived from the
 * graphs at start.
 *
 * Invariants (proved by the conformance suite on every backend):
 * - `create` writes the assistant and its version 1 in one atomic step; an id already stored
 *   (in any tenant: ids are global) is CONFLICT;
 * - `update` adds version max+1 and makes it current, atomically: of concurrent updates each
 *   gets its own version number, none is lost;
 * - `setLatest` makes a stored version current (its fields become the assistant's) without
 *   adding one; NOT_FOUND for a version the assistant does not have;
 * - an assistant outside the caller's scope is treated exactly like a missing one;
 * - deleting an assistant deletes its versions.
 */
export interface AssistantStore {
  /** VALIDATION_ERROR for bad input, CONFLICT when the id exists. */
  create(input: NewAssistant, scope: Scope): Promise<StoredAssistant>;
  /** null when missing or outside `scope`. */
  get(id: string, scope: Scope): Promise<StoredAssistant | null>;
  /** The assistants in `scope` (of `graphId` when given), newest first (`createdAt`, then id). */
  list(scope: Scope, filter?: { graphId?: string }): Promise<StoredAssistant[]>;
  /** A new current version from the patch; NOT_FOUND when missing or outside `scope`. */
  update(id: string, patch: AssistantPatch, scope: Scope): Promise<StoredAssistant>;
  /** false when missing or outside `scope`. Its versions go with it. */
  delete(id: string, scope: Scope): Promise<boolean>;
  /** Newest version first; [] when missing or outside `scope`. */
  listVersions(id: string, scope: Scope): Promise<AssistantVersion[]>;
  /** Makes `version` current; NOT_FOUND when the assistant or the version is missing. */
  setLatest(id: string, version: number, scope: Scope): Promise<StoredAssistant>;
}

/** The fields of the version a checked patch makes from the current ones (both backends use it). */
export function patchedFields(
  current: AssistantFields,
  parsed: z.output<typeof AssistantPatchSchema>,
): AssistantFields {
  return {
    graphId: parsed.graphId ?? current.graphId,
    name: parsed.name ?? current.name,
    description: parsed.description !== undefined ? parsed.description : current.description,
    config: parsed.config ?? current.config,
    context: parsed.context ?? current.context,
    metadata: { ...current.metadata, ...parsed.metadata },
  };
}

/** Newest first: `createdAt` descending, then id descending (the same on every backend). */
export function compareAssistants(a: StoredAssistant, b: StoredAssistant): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
