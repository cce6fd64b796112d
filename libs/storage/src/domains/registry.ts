import { z } from 'zod';

/** What the configuration registry holds: agent definitions and LLM providers. */
const RegistryKindSchema = z.enum(['agent', 'provider']);
export type RegistryKind = z.infer<typeof RegistryKindSchema>;

/** A stored entry's payload: a JSON object (the API's already validated definition). */
const RegistryDataSchema = z.record(z.string(), z.unknown());

const RegistryNameSchema = z.string().min(1).max(200);

/**
 * One entry of the configuration registry. `name` is unique per `kind` (an agent and a provider
 * may share a name). `version` is 1 when created and +1 on every write.
 */
export interface RegistryEntry {
  kind: RegistryKind;
  name: string;
  version: number;
  data: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export const PutRegistryEntryInputSchema = z.strictObject({
  kind: RegistryKindSchema,
  name: RegistryNameSchema,
  data: RegistryDataSchema,
  /**
   * null: create only (CONFLICT when the entry exists); a number: replace only the entry at
   * exactly this version (VERSION_CONFLICT when it moved on, NOT_FOUND when missing); absent:
   * create or replace, whatever is stored.
   */
  expectedVersion: z.number().int().min(1).nullable().optional(),
});
export type PutRegistryEntryInput = z.input<typeof PutRegistryEntryInputSchema>;

export const DeleteRegistryEntryInputSchema = z.strictObject({
  kind: RegistryKindSchema,
  name: RegistryNameSchema,
  /** When given, the entry is deleted only at exactly this version (VERSION_CONFLICT otherwise). */
  expectedVersion: z.number().int().min(1).optional(),
});
export type DeleteRegistryEntryInput = z.input<typeof DeleteRegistryEntryInputSchema>;

/**
 * The operator-level configuration registry (agents and providers managed through the API).
 * Global, not per tenant: it configures the server itself, like the files it complements.
 *
 * Invariants (proved by the conformance suite):
 * - a write checks `expectedVersion` and writes in one atomic step: of concurrent writers at one
 *   version exactly one wins, the others get VERSION_CONFLICT (CONFLICT for concurrent creates);
 * - `data` round-trips exactly (any JSON object);
 * - deleting and creating again starts at version 1.
 */
export interface RegistryStore {
  /** null when missing. */
  get(kind: RegistryKind, name: string): Promise<RegistryEntry | null>;
  /** Every entry (of `kind` when given), by kind then name. One query: runs call it per start. */
  list(kind?: RegistryKind): Promise<RegistryEntry[]>;
  /** Creates or replaces an entry as `expectedVersion` says; VALIDATION_ERROR for bad input. */
  put(input: PutRegistryEntryInput): Promise<RegistryEntry>;
  /** false when missing; VERSION_CONFLICT when `expectedVersion` differs from the stored one. */
  delete(input: DeleteRegistryEntryInput): Promise<boolean>;
}

/** Orders entries by kind, then name (code-point order, the same on every backend). */
export function compareRegistryEntries(a: RegistryEntry, b: RegistryEntry): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
