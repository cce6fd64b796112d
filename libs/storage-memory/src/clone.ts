/**
 * Deep copy of plain data (objects, arrays, Dates, primitives). Used instead of structuredClone
 * because that builds Dates in the host realm, which fail `instanceof Date` inside jest's VM.
 */
export function clone<T>(value: T): T {
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Array.isArray(value)) return value.map((entry: unknown) => clone(entry)) as T;
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) copy[key] = clone(entry);
    return copy as T;
  }
  return value;
}
