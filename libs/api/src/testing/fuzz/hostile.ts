import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';

/** What the hostile values may draw on besides constants. */
export interface HostileOptions {
  /** Another tenant's ids (sessions, messages, runs, artifacts): handed in as our own. */
  foreignIds?: readonly string[];
  /** Longest generated string (bytes); the bench raises it, the spec keeps it small. */
  maxStringLength: number;
  /** Deepest generated nesting. */
  maxDepth: number;
}

const ODD_STRINGS = [
  '',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF\uD800',
  'x\uDBFF',
  '\uFEFF',
  '\u202Eevil',
  'e\u0301\u0301\u0301',
  '😀\u200D😀',
  '../../../../etc/passwd',
  '..%2f..%2fetc',
  '%00',
  '%',
  "'; DROP TABLE sessions; --",
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  '\r\nX-Injected: 1',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '0',
  '-1',
  '1e309',
  'NaN',
  '2026-13-45T99:99:99Z',
  ' ',
];

const ODD_NUMBERS = [
  -1,
  0,
  -0,
  0.5,
  1.5,
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  -1e308,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
];

function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 'deep';
  for (let i = 0; i < depth; i += 1) value = kind === 'array' ? [value] : { a: value };
  return value;
}

/** A JSON object with an own `__proto__` / `constructor` key (JSON.stringify keeps own keys). */
function prototypeKeys(): Arbitrary<Record<string, unknown>> {
  return fc.constantFrom(
    Object.defineProperty({}, '__proto__', {
      value: { polluted: true, isAdmin: true },
      enumerable: true,
    }) as Record<string, unknown>,
    { constructor: { prototype: { polluted: true } } },
    { prototype: { polluted: true } },
    { toString: 'x', valueOf: 1, hasOwnProperty: null },
  );
}

/** One hostile value: a wrong type, a huge or odd string, an odd number, deep nesting... */
export function hostileValue(options: HostileOptions): Arbitrary<unknown> {
  const { maxStringLength, maxDepth } = options;
  const arbitraries: Arbitrary<unknown>[] = [
    fc.constantFrom(...ODD_STRINGS),
    fc.constantFrom(...ODD_NUMBERS),
    fc.constantFrom(true, false, null, [], {}, [null], [[]], { '': '' }),
    fc.integer({ min: 1000, max: maxStringLength }).map((n) => 'x'.repeat(n)),
    fc.integer({ min: 100, max: maxStringLength / 4 }).map((n) => '\u0000\uD800'.repeat(n)),
    fc.string({ unit: 'binary', maxLength: 64 }),
    fc.integer({ min: 50, max: maxDepth }).map((d) => nested(d, 'array')),
    fc.integer({ min: 50, max: maxDepth }).map((d) => nested(d, 'object')),
    prototypeKeys(),
    fc.array(fc.string({ maxLength: 8 }), { minLength: 1000, maxLength: 3000 }),
  ];
  if (options.foreignIds && options.foreignIds.length > 0) {
    arbitraries.push(fc.constantFrom(...options.foreignIds));
  }
  return fc.oneof(...arbitraries);
}

type JsonPath = (string | number)[];

function paths(value: unknown, prefix: JsonPath = [], out: JsonPath[] = []): JsonPath[] {
  out.push(prefix);
  if (prefix.length > 4) return out;
  if (Array.isArray(value)) {
    value.forEach((item, i) => paths(item, [...prefix, i], out));
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      paths((value as Record<string, unknown>)[key], [...prefix, key], out);
    }
  }
  return out;
}

/**
 * `root` with the containers along `path` copied (shallowly), so the last one can be changed
 * without touching `root`. Not structuredClone: values may nest thousands deep.
 */
function copyAlong(
  root: unknown,
  path: JsonPath,
): { copy: unknown; parent: Record<string | number, unknown> } {
  const clone = (value: unknown): Record<string | number, unknown> =>
    (Array.isArray(value) ? [...(value as unknown[])] : { ...(value as object) }) as Record<
      string | number,
      unknown
    >;
  const copy = clone(root);
  let parent = copy;
  for (const key of path.slice(0, -1)) {
    const child = clone(parent[key]);
    Object.defineProperty(parent, key, {
      value: child,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    parent = child;
  }
  return { copy, parent };
}

function setAt(root: unknown, path: JsonPath, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const { copy, parent } = copyAlong(root, path);
  // defineProperty: a key named `__proto__` becomes an own (serialised) key, not the prototype.
  Object.defineProperty(parent, path[path.length - 1] as string | number, {
    value: replacement,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}

function deleteAt(root: unknown, path: JsonPath): unknown {
  if (path.length === 0) return undefined;
  const { copy, parent } = copyAlong(root, path);
  if (Array.isArray(parent)) parent.splice(path[path.length - 1] as number, 1);
  else delete parent[path[path.length - 1] as string];
  return copy;
}

export type Mutation = 'none' | 'replace' | 'add-key' | 'delete';

/**
 * `valid` broken in one place: a node replaced by a hostile value, a hostile key added to an
 * object (prototype keys included), or a node deleted. `none` keeps a valid request in the mix,
 * so the routes' success paths are exercised too.
 */
export function mutated(
  valid: Arbitrary<unknown>,
  options: HostileOptions,
): Arbitrary<{ value: unknown; mutation: Mutation; at: string }> {
  return fc
    .tuple(
      valid,
      fc.constantFrom<Mutation>('none', 'replace', 'replace', 'add-key', 'delete'),
      fc.nat(),
      hostileValue(options),
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'unknown_field', '', '\u0000'),
    )
    .map(([value, mutation, pick, hostile, key]) => {
      if (mutation === 'none') return { value, mutation, at: '' };
      const all = paths(value);
      const path = all[pick % all.length] as JsonPath;
      const at = path.join('.') || '(root)';
      if (mutation === 'replace') return { value: setAt(value, path, hostile), mutation, at };
      if (mutation === 'delete') return { value: deleteAt(value, path), mutation, at };
      const objects = all.filter((p) => {
        let node: unknown = value;
        for (const k of p) node = (node as Record<string | number, unknown>)[k];
        return typeof node === 'object' && node !== null && !Array.isArray(node);
      });
      if (objects.length === 0) return { value: setAt(value, path, hostile), mutation, at };
      const target = objects[pick % objects.length] as JsonPath;
      return {
        value: setAt(value, [...target, key], hostile),
        mutation,
        at: [...target, key].join('.'),
      };
    });
}
