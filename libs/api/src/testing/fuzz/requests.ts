import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import type { HostileOptions } from './hostile';
import { hostileValue, mutated } from './hostile';
import type { JsonSchema, RefResolver } from './schema-arbitrary';
import { refResolver, validValue } from './schema-arbitrary';
import type { FuzzTarget } from './targets';
import { targetName } from './targets';

/** One generated HTTP request, as sent (and as printed when it fails). */
export interface FuzzRequest {
  target: string;
  method: string;
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** What was done to it (e.g. `body replace at config.temperature`, `oversized header`). */
  hostility: string;
  /** Set when the request addresses another tenant's resource by id: it must not succeed. */
  foreignId?: string;
}

/** Ids of each kind, for one tenant. */
export interface IdPools {
  session: string[];
  message: string[];
  run: string[];
  artifact: string[];
  agent: string[];
  provider: string[];
}

export interface RequestOptions extends HostileOptions {
  /** The caller's own ids (so success paths are reached). */
  own: IdPools;
  /** Another tenant's ids (nothing about them may come back). */
  foreign: IdPools;
  /** Headers every request carries (the caller's key). */
  headers: Record<string, string>;
  /** The server's body limit: an oversized body is one byte more. */
  maxBodyBytes: number;
}

/** Every id of the pools. */
function allIds(pools: IdPools): Set<string> {
  return new Set<string>(Object.values(pools).flat() as string[]);
}

/** Procedures whose id fields are filters (an empty answer is right), not the addressed resource. */
const FILTERING = /\.(list|search|stats|costByModel)$/;

/** Which pool an id-like field or parameter draws from, by its name and the path around it. */
function poolFor(name: string, path: string): keyof IdPools | undefined {
  if (/^(mid|messageId|message_id|parentId|parent_id)$/.test(name)) return 'message';
  if (/^(run_id|runId)$/.test(name)) return 'run';
  if (/^(artifactId|artifact_id)$/.test(name)) return 'artifact';
  if (/^(session_id|sessionId)$/.test(name)) return 'session';
  if (name === 'name' && path.includes('agents')) return 'agent';
  if (name === 'id' && path.includes('provider')) return 'provider';
  if (name === 'id' && path.includes('artifact')) return 'artifact';
  if (name === 'id') return 'session';
  return undefined;
}

/** A value for an id field: mostly our own, sometimes the other tenant's, sometimes hostile. */
function idValue(pool: keyof IdPools, options: RequestOptions): Arbitrary<unknown> {
  const choices: Arbitrary<unknown>[] = [];
  if (options.own[pool].length > 0) choices.push(fc.constantFrom(...options.own[pool]));
  if (options.foreign[pool].length > 0) choices.push(fc.constantFrom(...options.foreign[pool]));
  choices.push(hostileValue(options));
  return fc.oneof(...choices);
}

/** Replaces id-like fields of a generated body with real ids (own or foreign). */
function withIds(value: unknown, path: string, options: RequestOptions): Arbitrary<unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fc.constant(value);
  const record = value as Record<string, unknown>;
  const overrides: Record<string, Arbitrary<unknown>> = {};
  for (const key of Object.keys(record)) {
    const pool = poolFor(key, path);
    if (pool) overrides[key] = fc.oneof(fc.constant(record[key]), idValue(pool, options));
  }
  if (Object.keys(overrides).length === 0) return fc.constant(value);
  return fc.record(overrides).map((ids) => ({ ...record, ...ids }));
}

/** Percent-encodes a path segment; lone surrogates become the raw bytes a client could send. */
function encodeSegment(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  try {
    return encodeURIComponent(text);
  } catch {
    return text
      .replace(/[\uD800-\uDFFF]/g, '%ED%A0%80')
      .replace(/[^A-Za-z0-9%_.~-]/g, (c) =>
        Array.from(Buffer.from(c, 'utf8'), (b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
      );
  }
}

function queryValue(value: unknown): string[] {
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => encodeSegment(v));
  return [encodeSegment(value)];
}

const RAW_QUERIES = [
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'a[b][c][d][e][f][g][h][i][j][k]=1',
  'limit=1&limit=2&limit=3',
  'limit[]=1',
  '%=%',
  '%ZZ=1',
  'x=%ED%A0%80',
];

/** Transport-level hostility: wrong content type, malformed JSON, oversized header or body. */
type Transport =
  | 'json'
  | 'text/plain'
  | 'form'
  | 'multipart'
  | 'no content type'
  | 'malformed json'
  | 'oversized body'
  | 'oversized header'
  | 'charset'
  | 'gzip';

function transport(): Arbitrary<Transport> {
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant<Transport>('json') },
    {
      weight: 6,
      arbitrary: fc.constantFrom<Transport>(
        'text/plain',
        'form',
        'multipart',
        'no content type',
        'malformed json',
        'oversized body',
        'oversized header',
        'charset',
        'gzip',
      ),
    },
  );
}

function applyTransport(
  request: FuzzRequest,
  kind: Transport,
  options: RequestOptions,
): FuzzRequest {
  const headers = { ...request.headers };
  let body = request.body;
  switch (kind) {
    case 'json':
      return request;
    case 'text/plain':
      headers['Content-Type'] = 'text/plain';
      break;
    case 'form':
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = 'title=x&__proto__[polluted]=1';
      break;
    case 'multipart':
      headers['Content-Type'] = 'multipart/form-data; boundary=zz';
      body = '--zz\r\nContent-Disposition: form-data; name="title"\r\n\r\nx\r\n--zz--\r\n';
      break;
    case 'no content type':
      delete headers['Content-Type'];
      break;
    case 'malformed json':
      headers['Content-Type'] = 'application/json';
      body = `${(body ?? '{"a":1}').slice(0, 200)}{,"\u0000`;
      break;
    case 'oversized body':
      headers['Content-Type'] = 'application/json';
      body = `{"title":"${'x'.repeat(options.maxBodyBytes + 1)}"}`;
      break;
    case 'oversized header':
      headers['X-Junk'] = 'h'.repeat(20 * 1024);
      break;
    case 'charset':
      headers['Content-Type'] = 'application/json; charset=klingon';
      break;
    case 'gzip':
      headers['Content-Encoding'] = 'gzip';
      break;
  }
  return {
    ...request,
    headers,
    ...(body !== undefined ? { body } : {}),
    hostility: `${request.hostility}, ${kind}`,
  };
}

function restRequest(
  target: Extract<FuzzTarget, { kind: 'rest' }>,
  resolve: RefResolver,
  options: RequestOptions,
): Arbitrary<FuzzRequest> {
  const params: Record<string, Arbitrary<unknown>> = {};
  for (const p of target.parameters) {
    if (p.in === 'header') continue;
    const pool = poolFor(p.name, target.path);
    const valid = validValue(p.schema, resolve);
    const value = pool
      ? fc.oneof({ weight: 3, arbitrary: idValue(pool, options) }, { weight: 1, arbitrary: valid })
      : fc.oneof({ weight: 2, arbitrary: valid }, { weight: 1, arbitrary: hostileValue(options) });
    params[p.name] = p.in === 'path' || p.required ? value : fc.option(value, { nil: undefined });
  }
  const body = target.body
    ? mutated(
        validValue(target.body, resolve).chain((v) => withIds(v, target.path, options)),
        options,
      )
    : fc.constant(undefined);
  return fc
    .tuple(
      fc.record(params),
      body,
      fc.option(fc.constantFrom(...RAW_QUERIES), { freq: 8 }),
      transport(),
    )
    .map(([values, generated, rawQuery, kind]) => {
      let path = target.path;
      const query: string[] = [];
      for (const p of target.parameters) {
        const value = values[p.name];
        if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeSegment(value));
        else if (p.in === 'query' && value !== undefined) {
          for (const v of queryValue(value)) query.push(`${encodeURIComponent(p.name)}=${v}`);
        }
      }
      if (rawQuery) query.push(rawQuery);
      const foreign = allIds(options.foreign);
      const foreignId = target.parameters
        .filter((p) => p.in === 'path')
        .map((p) => values[p.name])
        .find((v): v is string => typeof v === 'string' && foreign.has(v));
      const headers: Record<string, string> = { ...options.headers };
      const request: FuzzRequest = {
        target: targetName(target),
        method: target.method.toUpperCase(),
        url: query.length > 0 ? `${path}?${query.join('&')}` : path,
        headers,
        hostility: generated ? `body ${generated.mutation} at ${generated.at || '-'}` : 'params',
        ...(foreignId ? { foreignId } : {}),
      };
      if (generated && generated.value !== undefined) {
        headers['Content-Type'] = 'application/json';
        request.body = JSON.stringify(generated.value);
      }
      return applyTransport(request, kind, options);
    });
}

/** superjson `meta` that tries prototype pollution through its path syntax. */
const HOSTILE_META = [
  { values: { '__proto__.polluted': ['undefined'] } },
  { values: { 'constructor.prototype.polluted': [['custom', 'x']] } },
  { values: ['Date'] },
  { referentialEqualities: { '': ['__proto__'] } },
  'not an object',
];

function trpcRequest(
  target: Extract<FuzzTarget, { kind: 'trpc' }>,
  options: RequestOptions,
): Arbitrary<FuzzRequest> {
  const schema: JsonSchema = target.input ?? {};
  const resolve = refResolver(schema);
  const input = mutated(
    validValue(schema, resolve).chain((v) => withIds(v, target.path, options)),
    options,
  );
  const envelope = fc.oneof(
    { weight: 8, arbitrary: fc.constant<'superjson' | 'bare' | 'meta'>('superjson') },
    { weight: 1, arbitrary: fc.constant<'superjson' | 'bare' | 'meta'>('bare') },
    { weight: 1, arbitrary: fc.constant<'superjson' | 'bare' | 'meta'>('meta') },
  );
  return fc
    .tuple(input, envelope, fc.constantFrom(...HOSTILE_META), transport())
    .map(([generated, wrap, meta, kind]) => {
      const payload =
        wrap === 'bare'
          ? generated.value
          : wrap === 'meta'
            ? { json: generated.value, meta }
            : { json: generated.value };
      const text = JSON.stringify(payload) ?? '';
      const hostility = `input ${generated.mutation} at ${generated.at || '-'} (${wrap})`;
      const fields =
        typeof generated.value === 'object' && generated.value !== null
          ? Object.entries(generated.value as Record<string, unknown>)
          : [];
      const foreign = allIds(options.foreign);
      // A bare payload (no `json` key) reaches the procedure as no input at all.
      const addressed =
        FILTERING.test(target.path) || wrap === 'bare'
          ? undefined
          : fields.find(
              ([k, v]) =>
                /^(id|sessionId|artifactId|runId|messageId)$/.test(k) &&
                typeof v === 'string' &&
                foreign.has(v),
            );
      const marks = addressed ? { foreignId: addressed[1] as string } : {};
      const base = `/trpc/${target.path}`;
      if (target.type === 'mutation') {
        const request: FuzzRequest = {
          target: targetName(target),
          method: 'POST',
          url: base,
          headers: { ...options.headers, 'Content-Type': 'application/json' },
          hostility,
          ...marks,
          ...(text ? { body: text } : {}),
        };
        return applyTransport(request, kind, options);
      }
      return {
        target: targetName(target),
        method: 'GET',
        url: text ? `${base}?input=${encodeSegment(text)}` : base,
        headers: { ...options.headers },
        hostility,
        ...marks,
      };
    });
}

/** The arbitrary of hostile requests for one target. */
export function requestArbitrary(
  target: FuzzTarget,
  document: unknown,
  requestOptions: RequestOptions,
): Arbitrary<FuzzRequest> {
  const options = { ...requestOptions, foreignIds: [...allIds(requestOptions.foreign)] };
  return target.kind === 'rest'
    ? restRequest(target, refResolver(document), options)
    : trpcRequest(target, options);
}
