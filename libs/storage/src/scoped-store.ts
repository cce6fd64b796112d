import type { Scope } from './port';

/** First namespace label of every scoped item; keeps unscoped and scoped items apart. */
export const SCOPE_NAMESPACE_ROOT = 'scope';

/**
 * The namespace prefix of a caller's scope: `['scope', 'k1=v1', 'k2=v2']` with keys sorted,
 * so the same scope always maps to the same prefix and different scopes never overlap.
 */
export function scopeNamespacePrefix(scope: Scope): string[] {
  const parts = Object.keys(scope)
    .sort()
    .map((key) => `${encodeURIComponent(key)}=${encodeURIComponent(scope[key] ?? '')}`);
  return [SCOPE_NAMESPACE_ROOT, ...parts];
}

/**
 * The namespace label that marks a store item as belonging to one thread: an item whose
 * namespace contains `threadNamespaceLabel(threadId)` is deleted with the session of that thread.
 */
export function threadNamespaceLabel(threadId: string): string {
  return `thread:${threadId}`;
}
