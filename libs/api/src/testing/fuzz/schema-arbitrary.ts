import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';

/** The JSON Schema subset the OpenAPI document and `z.toJSONSchema` produce. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
}

/** Resolves `#/a/b` references against the document the schemas came from. */
export type RefResolver = (ref: string) => JsonSchema;

export function refResolver(root: unknown): RefResolver {
  return (ref) => {
    if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
    let node: unknown = root;
    for (const part of ref.slice(2).split('/')) {
      node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/')];
    }
    if (typeof node !== 'object' || node === null) throw new Error(`unresolved $ref ${ref}`);
    return node;
  };
}

/**
 * An arbitrary of values that (mostly) satisfy `schema`: the starting point the hostile
 * mutations then break in one place. Sizes stay small; huge values are the mutations' job.
 * Recursion is cut at `depth` (schemas may refer to themselves).
 */
export function validValue(
  schema: JsonSchema,
  resolve: RefResolver,
  depth = 0,
): Arbitrary<unknown> {
  if (depth > 6) return fc.constant(null);
  if (schema.$ref) return validValue(resolve(schema.$ref), resolve, depth + 1);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) {
    return fc.oneof(...alternatives.map((s) => validValue(s, resolve, depth + 1)));
  }
  if (schema.allOf && schema.allOf.length > 0) {
    return validValue(Object.assign({}, ...schema.allOf) as JsonSchema, resolve, depth + 1);
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) {
    return fc.oneof(...types.map((type) => validValue({ ...schema, type }, resolve, depth + 1)));
  }
  switch (types[0] ?? 'any') {
    case 'string':
      return stringValue(schema);
    case 'integer':
      return fc.integer({
        min: Math.ceil(schema.minimum ?? (schema.exclusiveMinimum ?? -1001) + 1),
        max: Math.floor(
          Math.min(schema.maximum ?? (schema.exclusiveMaximum ?? 1_000_001) - 1, 1_000_000),
        ),
      });
    case 'number': {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? -1000;
      const max = Math.min(schema.maximum ?? schema.exclusiveMaximum ?? 1e6, 1e6);
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(
        schema.items ? validValue(schema.items, resolve, depth + 1) : fc.jsonValue(),
        {
          minLength: schema.minItems ?? 0,
          maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)),
        },
      );
    case 'object':
      return objectValue(schema, resolve, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringValue(schema: JsonSchema): Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 24, 24));
  switch (schema.format ?? 'none') {
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'email':
      return fc.emailAddress();
    case 'uuid':
      return fc.uuid();
    default:
      break;
  }
  if (schema.pattern) {
    try {
      const pattern = new RegExp(schema.pattern);
      return fc
        .stringMatching(pattern)
        .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity));
    } catch {
      // A pattern JavaScript cannot compile: fall through to a plain string.
    }
  }
  return fc.string({ minLength, maxLength });
}

function objectValue(schema: JsonSchema, resolve: RefResolver, depth: number): Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const keys = Object.keys(properties);
  if (keys.length === 0) {
    const extra = schema.additionalProperties;
    if (extra && typeof extra === 'object') {
      return fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }),
        validValue(extra, resolve, depth + 1),
        { maxKeys: 3 },
      );
    }
    return fc.constant({});
  }
  const record: Record<string, Arbitrary<unknown>> = {};
  for (const key of keys)
    record[key] = validValue(properties[key] as JsonSchema, resolve, depth + 1);
  const required = (schema.required ?? []).filter((k) => keys.includes(k));
  return fc.record(record, { requiredKeys: required });
}
