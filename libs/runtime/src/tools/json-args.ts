import { Validator } from '@cfworker/json-schema';
import type { OutputUnit } from '@cfworker/json-schema';
import type { FieldIssue } from '@cognition/contracts';

/** Validators by schema object: a tool's schema is fixed, and checked on every call. */
const validators = new WeakMap<object, Validator>();

/**
 * Errors that only say "a child failed": the child's own error (reported too) names the field.
 * `false` is a property an `additionalProperties: false` schema does not allow.
 */
const SUMMARY_KEYWORDS = new Set(['properties', 'additionalProperties', 'items', 'prefixItems']);

/** A JSON pointer (`#/a/0/b`) as a dotted field path (`a.0.b`). */
function dotted(location: string): string {
  return location
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function issueOf(unit: OutputUnit): FieldIssue {
  let path = dotted(unit.instanceLocation);
  let message = unit.error;
  if (unit.keyword === 'required') {
    const missing = /"([^"]+)"/.exec(unit.error)?.[1];
    if (missing !== undefined) {
      path = path === '' ? missing : `${path}.${missing}`;
      message = 'Required';
    }
  } else if (unit.keyword === 'false') {
    message = 'not allowed by the schema';
  }
  return { path: path || '(root)', message };
}

/**
 * Checks `args` against a tool's JSON Schema (draft 2020-12 semantics, which also reads the
 * draft-07 schemas MCP servers usually publish). Issues use the dotted paths of zod's.
 */
export function checkJsonArgs(
  schema: Record<string, unknown>,
  args: unknown,
): { ok: true; value: unknown } | { ok: false; issues: FieldIssue[] } {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema, '2020-12', false);
    validators.set(schema, validator);
  }
  const result = validator.validate(args);
  if (result.valid) return { ok: true, value: args };
  const issues = result.errors.filter((unit) => !SUMMARY_KEYWORDS.has(unit.keyword)).map(issueOf);
  return {
    ok: false,
    issues: issues.length > 0 ? issues : [{ path: '(root)', message: 'does not match the schema' }],
  };
}
