import type { StringMap } from '@cognition/contracts';

/**
 * The caller's scope: scope key -> value (e.g. `{ user: 'alice', project: 'p1' }`).
 * A session is visible to a caller only when, for every key of the caller's scope, the session's
 * scope has the same value. The empty scope (scoping disabled) sees every session.
 * Every method that addresses a session by id takes the caller's scope and treats a session
 * outside it exactly like a missing one (existence is never revealed).
 */
export type Scope = StringMap;

/** True when every key of the caller's scope has the same value in the resource's scopes. */
export function scopeMatches(callerScope: Scope, resourceScopes: Scope): boolean {
  for (const [key, value] of Object.entries(callerScope)) {
    if (resourceScopes[key] !== value) return false;
  }
  return true;
}

/** True when every metadata predicate matches the session's metadata exactly. */
export function metadataMatches(predicates: Scope | undefined, metadata: Scope): boolean {
  if (!predicates) return true;
  return Object.entries(predicates).every(([key, value]) => metadata[key] === value);
}
