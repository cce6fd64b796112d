import {
  CreateArtifactInputSchema,
  IdSchema,
  ListArtifactsQuerySchema,
  refineArtifactUpdate,
  UpdateArtifactFieldsSchema,
} from '@cognition/contracts';
import { z } from 'zod';

/** Inputs are strict: an unknown field is a 422, never silently dropped. */
export const CreateArtifactApiInputSchema = CreateArtifactInputSchema;
export type CreateArtifactApiInput = z.output<typeof CreateArtifactApiInputSchema>;

export const ArtifactIdInputSchema = z.object({ id: IdSchema }).strict();
export type ArtifactIdInput = z.output<typeof ArtifactIdInputSchema>;

export const GetArtifactApiInputSchema = z
  .object({ id: IdSchema, version: z.number().int().min(1).optional() })
  .strict();
export type GetArtifactApiInput = z.output<typeof GetArtifactApiInputSchema>;

/** Optional as a whole: `artifacts.list()` is the first page with the default limit. */
export const ListArtifactsApiInputSchema = ListArtifactsQuerySchema.prefault({});
export type ListArtifactsApiInput = z.output<typeof ListArtifactsApiInputSchema>;

export const UpdateArtifactApiInputSchema = UpdateArtifactFieldsSchema.extend({
  id: IdSchema,
}).superRefine(refineArtifactUpdate);
export type UpdateArtifactApiInput = z.output<typeof UpdateArtifactApiInputSchema>;
