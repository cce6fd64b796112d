import { z } from 'zod';

/** Identifiers are opaque strings (UUIDs when we generate them), bounded to keep indexes sane. */
export const IdSchema = z.string().min(1).max(128);

/** A flat string -> string map (metadata, scopes). Keys are bounded; values are plain strings. */
export const StringMapSchema = z.record(z.string().min(1).max(128), z.string().max(2048));
export type StringMap = z.infer<typeof StringMapSchema>;

/** Pagination limits shared by every paged read. */
export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 500;

export const PageQuerySchema = z.object({
  limit: z.number().int().min(1).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT),
  offset: z.number().int().min(0).default(0),
});
