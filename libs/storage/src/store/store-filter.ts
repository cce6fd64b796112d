import { isDeepStrictEqual } from 'node:util';

type FilterOperator = '$eq' | '$ne' | '$gt' | '$gte' | '$lt' | '$lte';
const OPERATORS = new Set<string>(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte']);

function compare(actual: unknown, operator: FilterOperator, expected: unknown): boolean {
  switch (operator) {
    case '$eq':
      return isDeepStrictEqual(actual, expected);
    case '$ne':
      return !isDeepStrictEqual(actual, expected);
    case '$gt':
      return (actual as number) > (expected as number);
    case '$gte':
      return (actual as number) >= (expected as number);
    case '$lt':
      return (actual as number) < (expected as number);
    case '$lte':
      return (actual as number) <= (expected as number);
  }
}

/**
 * The `filter` of a LangGraph store search, applied to an item's value: exact (deep) match per
 * field, or comparison operators (`{ year: { $gte: 2024 } }`). One implementation, so every
 * backend's store filters alike.
 */
export function storeFilterMatches(
  value: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, expected]) => {
    const actual = value[field];
    if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
      const entries = Object.entries(expected as Record<string, unknown>);
      if (entries.length > 0 && entries.every(([op]) => OPERATORS.has(op))) {
        return entries.every(([op, operand]) => compare(actual, op as FilterOperator, operand));
      }
    }
    return isDeepStrictEqual(actual, expected);
  });
}
