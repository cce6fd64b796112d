import { z } from 'zod';

/**
 * Parsers of environment values (text in, typed value out, with the message a person reads when
 * the value is wrong), shared by the settings table (settings.ts) and the area readers.
 */

export const boolText = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'].includes(v), {
    message: 'expected true or false',
  })
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));

export function intText(min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+$/, `expected an integer between ${min} and ${max}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, `expected an integer between ${min} and ${max}`)
        .max(max, `expected an integer between ${min} and ${max}`),
    );
}

export function positiveNumberText(max: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, `expected a positive number up to ${max}`)
    .transform(Number)
    .pipe(z.number().gt(0, 'expected a number above 0').max(max, `expected at most ${max}`));
}

/** A number of 0 or more (0: off), up to `max`. */
export function nonNegativeNumberText(max: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, `expected a number from 0 to ${max}`)
    .transform(Number)
    .pipe(z.number().max(max, `expected at most ${max}`));
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
export const byteSizeText = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^\d+\s*(b|kb|mb|gb)?$/, 'expected a size in bytes such as 1048576, 512kb or 4mb')
  .transform((v) => {
    const match = /^(\d+)\s*([a-z]*)$/.exec(v);
    return Number(match?.[1]) * (SIZE_UNITS[match?.[2] ?? ''] ?? 1);
  })
  .pipe(
    z
      .number()
      .int()
      .min(1024, 'expected at least 1kb')
      .max(1024 ** 3, 'expected at most 1gb'),
  );

export const secretText = z.string().trim().min(1, 'must not be blank');

/** A URL whose scheme is one of `schemes` (e.g. `['http', 'https']`). */
function urlText(schemes: readonly string[], message: string) {
  return z
    .string()
    .trim()
    .refine(
      (value) => {
        try {
          return schemes.includes(new URL(value).protocol.slice(0, -1));
        } catch {
          return false;
        }
      },
      { message },
    );
}

export const httpUrlText = urlText(['http', 'https'], 'expected an http:// or https:// URL');

export function enumText<const T extends readonly [string, ...string[]]>(values: T) {
  return z
    .string()
    .trim()
    .toLowerCase()
    .refine((v): v is T[number] => (values as readonly string[]).includes(v), {
      message: `expected one of ${values.join(', ')}`,
    });
}

export function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export const redisUrlText = urlText(['redis', 'rediss'], 'expected a redis:// or rediss:// URL');

/** A node id: what `/health` and the run rows show (letters, digits, `.`, `_`, `-`). */
export const nodeIdText = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'expected 1-64 letters, digits, ".", "_" or "-"');
/**
 * `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas, values percent-encoded
 * (the OpenTelemetry format). Values are never echoed in a problem: they often hold credentials.
 */
export function parseOtlpHeaders(raw: string, problems: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  list(raw).forEach((pair, index) => {
    const eq = pair.indexOf('=');
    const name = eq === -1 ? '' : pair.slice(0, eq).trim();
    let value: string | undefined;
    try {
      value = eq === -1 ? undefined : decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      value = undefined;
    }
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || value === undefined) {
      problems.push(
        `OTEL_EXPORTER_OTLP_HEADERS entry ${index + 1}: expected name=value with a header name and a percent-encoded value (the value is not shown)`,
      );
      return;
    }
    headers[name] = value;
  });
  return headers;
}
