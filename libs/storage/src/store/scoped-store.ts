import type {
  BaseStore,
  Item,
  ListNamespacesOperation,
  MatchCondition,
  Operation,
  OperationResults,
  SearchItem,
} from '@langchain/langgraph-checkpoint';
import type { Scope } from '../scope';
import { TtlAwareStore } from './store-ttl';

/** First namespace label of every scoped item; keeps unscoped and scoped items apart. */
export const SCOPE_NAMESPACE_ROOT = 'scope';

/**
 * Encodes a value for use inside one namespace label. LangGraph rejects labels containing `.`,
 * `:` or NUL; percent-encoding (plus `.` -> `%2E`) removes all three and keeps labels reversible.
 */
export function encodeNamespaceLabel(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

/**
 * The namespace prefix of a caller's scope: `['scope', 'k1=v1&k2=v2']` with keys sorted and
 * percent-encoded. The whole scope is ONE label, so no two different non-empty scopes share a
 * prefix and no namespace a caller writes below its own prefix can ever spell another scope's
 * prefix. The empty scope (scoping disabled) maps to `['scope']`, which sees every scoped item,
 * like the empty scope sees every session.
 */
export function scopeNamespacePrefix(scope: Scope): string[] {
  const keys = Object.keys(scope).sort();
  if (keys.length === 0) return [SCOPE_NAMESPACE_ROOT];
  const label = keys
    .map((key) => `${encodeNamespaceLabel(key)}=${encodeNamespaceLabel(scope[key] ?? '')}`)
    .join('&');
  return [SCOPE_NAMESPACE_ROOT, label];
}

/**
 * The namespace label that marks a store item as belonging to one thread: an item whose
 * namespace contains `threadNamespaceLabel(threadId)` (at any position) is deleted with the
 * session of that thread. Built from `=` rather than `:` because LangGraph rejects colons.
 */
export function threadNamespaceLabel(threadId: string): string {
  return `thread=${encodeNamespaceLabel(threadId)}`;
}

function startsWith(namespace: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((label, i) => namespace[i] === label);
}

/**
 * A view of `store` confined to one scope: every namespace the caller passes is prefixed with
 * `scopeNamespacePrefix(scope)` on the way in and stripped from results on the way out, and
 * `listNamespaces` only sees namespaces under the prefix. Tenants sharing one store therefore
 * never read, find, overwrite or delete each other's items. TTLs pass through unchanged.
 * The wrapper owns nothing: `start`/`stop` do not touch the wrapped store.
 */
export class ScopedStore extends TtlAwareStore {
  readonly prefix: readonly string[];

  constructor(
    private readonly inner: BaseStore,
    readonly scope: Scope,
  ) {
    super();
    this.prefix = scopeNamespacePrefix(scope);
  }

  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const mapped = operations.map((operation) => this.scopeOperation(operation));
    const results = (await this.inner.batch(mapped)) as unknown[];
    return operations.map((operation, index) =>
      this.unscopeResult(operation, results[index]),
    ) as OperationResults<Op>;
  }

  private scopeOperation(operation: Operation): Operation {
    if ('namespacePrefix' in operation) {
      return { ...operation, namespacePrefix: [...this.prefix, ...operation.namespacePrefix] };
    }
    if ('namespace' in operation) {
      return { ...operation, namespace: [...this.prefix, ...operation.namespace] };
    }
    return this.scopeListNamespaces(operation);
  }

  private scopeListNamespaces(operation: ListNamespacesOperation): ListNamespacesOperation {
    const conditions: MatchCondition[] = (operation.matchConditions ?? []).map((condition) =>
      condition.matchType === 'prefix'
        ? { matchType: 'prefix', path: [...this.prefix, ...condition.path] }
        : condition,
    );
    if (!conditions.some((condition) => condition.matchType === 'prefix')) {
      conditions.push({ matchType: 'prefix', path: [...this.prefix] });
    }
    return {
      ...operation,
      matchConditions: conditions,
      maxDepth:
        operation.maxDepth === undefined ? undefined : operation.maxDepth + this.prefix.length,
    };
  }

  private strip(namespace: readonly string[]): string[] {
    return namespace.slice(this.prefix.length);
  }

  private unscopeItem<T extends Item | SearchItem>(item: T): T {
    return { ...item, namespace: this.strip(item.namespace) };
  }

  private unscopeResult(operation: Operation, result: unknown): unknown {
    if ('namespacePrefix' in operation) {
      return (result as SearchItem[])
        .filter((item) => startsWith(item.namespace, this.prefix))
        .map((item) => this.unscopeItem(item));
    }
    if ('namespace' in operation) {
      if ('value' in operation) return result;
      const item = result as Item | null;
      return item && startsWith(item.namespace, this.prefix) ? this.unscopeItem(item) : null;
    }
    return (result as string[][])
      .filter(
        (namespace) => namespace.length > this.prefix.length && startsWith(namespace, this.prefix),
      )
      .map((namespace) => this.strip(namespace));
  }
}

/** Confines `store` to `scope`; see `ScopedStore`. */
export function scopedStore(store: BaseStore, scope: Scope): ScopedStore {
  return new ScopedStore(store, scope);
}
