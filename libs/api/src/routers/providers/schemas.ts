import { z } from 'zod';

/*
 * A provider is one document in the providers file's camelCase form, validated by the runtime
 * with the providers file's schema; these inputs only pick out its id and version.
 */

const ProviderIdSchema = z.string().min(1).max(64);
const ExpectedVersionSchema = z.number().int().min(1);

export const ProviderIdInputSchema = z.strictObject({ id: ProviderIdSchema });

/** `providers.create`: the provider document, `id` included. */
export const CreateProviderInputSchema = z.record(z.string(), z.unknown());

/** `providers.update`: the provider document plus its `id` and optional `expectedVersion`. */
export const UpdateProviderInputSchema = z.looseObject({
  id: ProviderIdSchema,
  expectedVersion: ExpectedVersionSchema.optional(),
});

export const DeleteProviderInputSchema = z.strictObject({
  id: ProviderIdSchema,
  expectedVersion: ExpectedVersionSchema.optional(),
});
