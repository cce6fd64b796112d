import type { Scope } from './port';

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
