import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import type { FuzzRequest, RequestOptions } from './requests';
import { requestArbitrary } from './requests';
import type { FuzzTarget } from './targets';

/** What came back for one request. */
export interface FuzzAnswer {
  /** HTTP status, or `hang` (no answer within the timeout) / `dropped` (connection cut). */
  status: number | 'hang' | 'dropped';
  contentType: string;
  text: string;
  error?: string;
}

export type FindingKind = 'status >= 500' | 'hang' | 'dropped' | 'field-less 4xx' | 'leak';

export interface FuzzFinding {
  kind: FindingKind;
  /** Position in the run (with the seed, replays the request). */
  index: number;
  request: FuzzRequest;
  answer: FuzzAnswer;
  /** For leaks: which foreign secret came back. */
  leaked?: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  /** Answers by status class: `2xx`, `3xx`, `4xx`, `5xx`, `hang`, `dropped`. */
  byClass: Record<string, number>;
  /** Answers by target (route or procedure) and status, e.g. `GET /sessions 422`. */
  byTarget: Record<string, number>;
  serverErrors: number;
  hangs: number;
  dropped: number;
  fieldless: number;
  leaks: number;
  findings: FuzzFinding[];
}

export interface FuzzRunOptions extends RequestOptions {
  baseUrl: string;
  targets: FuzzTarget[];
  /** The OpenAPI document (REST schemas' `$ref`s resolve against it). */
  document: unknown;
  seed: number;
  requests: number;
  /** An answer slower than this is a hang. */
  timeoutMs: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Strings of the other tenant's data (titles, contents, ids): none may come back. */
  secrets: string[];
  /** Findings kept in full (the counts go on). */
  keepFindings?: number;
}

/** How long the beginning of an event stream is read before it is judged. */
const STREAM_READ_MS = 500;

function streamAnswer(status: number, contentType: string, bytes: Buffer): FuzzAnswer {
  const text = bytes.toString('utf8');
  const error = /event: serialized-error\ndata: (.*)\n/.exec(text);
  if (error?.[1]) {
    try {
      const parsed = JSON.parse(error[1]) as { json?: { data?: { httpStatus?: unknown } } };
      const httpStatus = parsed.json?.data?.httpStatus;
      if (typeof httpStatus === 'number') {
        return { status: httpStatus, contentType, text: JSON.stringify({ error: parsed }) };
      }
    } catch {
      // not JSON: judged as the stream it is
    }
  }
  return { status, contentType, text };
}

/** Sends one request over node:http (which, unlike fetch, sends any header and byte). */
export function sendFuzzRequest(
  baseUrl: string,
  req: FuzzRequest,
  timeoutMs: number,
): Promise<FuzzAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: FuzzAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      resolve(answer);
    };
    const timer = setTimeout(
      () => finish({ status: 'hang', contentType: '', text: '' }),
      timeoutMs,
    );
    const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          ...(body ? { 'Content-Length': String(body.length) } : {}),
        },
      },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '');
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        if (contentType.startsWith('text/event-stream')) {
          // A stream opened: its first events are the answer (tRPC subscriptions answer 200,
          // then a `serialized-error` event carrying the real status).
          const judge = () => finish(streamAnswer(status, contentType, Buffer.concat(chunks)));
          const cut = setTimeout(judge, STREAM_READ_MS);
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            const text = Buffer.concat(chunks).toString('utf8');
            if (
              text.includes('serialized-error') &&
              text.includes('\n\n', text.indexOf('serialized-error'))
            ) {
              clearTimeout(cut);
              judge();
            }
          });
          res.on('end', () => {
            clearTimeout(cut);
            judge();
          });
          res.on('error', () => {
            clearTimeout(cut);
            judge();
          });
          return;
        }
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          finish({ status, contentType, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (error) =>
          finish({
            status,
            contentType,
            text: Buffer.concat(chunks).toString('utf8'),
            error: error.message,
          }),
        );
      },
    );
    outgoing.on('error', (error) => {
      // A refused body (413 sent before the rest was read) may reset the socket after the
      // answer arrived; only an error without any answer is a dropped connection.
      setTimeout(
        () => finish({ status: 'dropped', contentType: '', text: '', error: error.message }),
        50,
      );
    });
    outgoing.end(body);
  });
}

/** Statuses that say "your input is wrong": their body must name what is wrong. */
const INPUT_STATUSES = new Set([400, 413, 415, 422, 431]);

interface ErrorShape {
  message?: string;
  issues?: { path?: unknown }[];
}

/** The message and field list of a REST error body or a tRPC error (single or batched). */
function errorShape(text: string): ErrorShape | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const first = Array.isArray(parsed) ? (parsed[0] as unknown) : parsed;
  if (typeof first !== 'object' || first === null) return undefined;
  const rest = first as { detail?: unknown; errors?: unknown; error?: unknown };
  if (typeof rest.detail === 'string') {
    return {
      message: rest.detail,
      ...(Array.isArray(rest.errors) ? { issues: rest.errors as { path?: unknown }[] } : {}),
    };
  }
  const trpc = (rest.error as { json?: unknown } | undefined)?.json ?? rest.error;
  if (typeof trpc === 'object' && trpc !== null) {
    const { message, data } = trpc as { message?: unknown; data?: { errors?: unknown } };
    return {
      ...(typeof message === 'string' ? { message } : {}),
      ...(Array.isArray(data?.errors) ? { issues: data.errors as { path?: unknown }[] } : {}),
    };
  }
  return undefined;
}

/** Words by which a message names the part of the request at fault when it has no field list. */
const REQUEST_PARTS = /\b(body|header|query|parameter|input|content-type|json|url|path)\b/i;

/** Whether an input-error answer names the offending field (or the part of the request). */
export function namesField(answer: FuzzAnswer): boolean {
  const shape = errorShape(answer.text);
  if (!shape?.message) return false;
  if (shape.issues && shape.issues.length > 0) {
    return shape.issues.every((i) => typeof i.path === 'string' && i.path.length > 0);
  }
  return REQUEST_PARTS.test(shape.message);
}

function statusClass(status: FuzzAnswer['status']): string {
  return typeof status === 'number' ? `${Math.floor(status / 100)}xx` : status;
}

/** The request as printed with a finding: long strings cut, so a report stays readable. */
export function describeRequest(req: FuzzRequest): string {
  const cut = (s: string) => (s.length > 600 ? `${s.slice(0, 600)}… (${s.length} chars)` : s);
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([k, v]) => [k, /authorization/i.test(k) ? '<key>' : cut(v)]),
  );
  return `${req.method} ${cut(req.url)} [${req.hostility}] headers=${JSON.stringify(headers)}${
    req.body !== undefined ? ` body=${cut(req.body)}` : ''
  }`;
}

/**
 * Generates `requests` hostile requests (deterministic for a seed: request i is the same in
 * every run), spread evenly over the targets, sends them `concurrency` at a time, and checks
 * every answer: no 5xx, no hang, no dropped connection, every input error names its field, and
 * no secret of the other tenant that the request did not itself carry.
 */
export async function runFuzz(options: FuzzRunOptions): Promise<FuzzReport> {
  const report: FuzzReport = {
    seed: options.seed,
    requests: 0,
    byClass: {},
    byTarget: {},
    serverErrors: 0,
    hangs: 0,
    dropped: 0,
    fieldless: 0,
    leaks: 0,
    findings: [],
  };
  const arbitraries = options.targets.map((t) => requestArbitrary(t, options.document, options));
  const keep = options.keepFindings ?? 20;
  const record = (finding: FuzzFinding) => {
    if (report.findings.length < keep) report.findings.push(finding);
  };
  let next = 0;
  const worker = async () => {
    for (;;) {
      const index = next;
      next += 1;
      if (index >= options.requests) return;
      const arbitrary = arbitraries[index % arbitraries.length];
      if (!arbitrary) return;
      const [req] = fc.sample(arbitrary, { seed: options.seed + index, numRuns: 1 });
      if (!req) continue;
      const answer = await sendFuzzRequest(options.baseUrl, req, options.timeoutMs);
      report.requests += 1;
      const cls = statusClass(answer.status);
      report.byClass[cls] = (report.byClass[cls] ?? 0) + 1;
      const key = `${req.target} ${String(answer.status)}`;
      report.byTarget[key] = (report.byTarget[key] ?? 0) + 1;
      if (answer.status === 'hang') {
        report.hangs += 1;
        record({ kind: 'hang', index, request: req, answer });
      } else if (answer.status === 'dropped') {
        report.dropped += 1;
        record({ kind: 'dropped', index, request: req, answer });
      } else if (answer.status >= 500) {
        report.serverErrors += 1;
        record({ kind: 'status >= 500', index, request: req, answer });
      } else if (INPUT_STATUSES.has(answer.status) && !namesField(answer)) {
        report.fieldless += 1;
        record({ kind: 'field-less 4xx', index, request: req, answer });
      }
      const sent = `${req.url}\n${req.body ?? ''}\n${JSON.stringify(req.headers)}`;
      const leaked = options.secrets.find(
        (secret) => answer.text.includes(secret) && !sent.includes(secret),
      );
      if (!leaked && req.foreignId && typeof answer.status === 'number' && answer.status < 300) {
        report.leaks += 1;
        record({
          kind: 'leak',
          index,
          request: req,
          answer,
          leaked: `success on ${req.foreignId}`,
        });
      } else if (leaked) {
        report.leaks += 1;
        record({ kind: 'leak', index, request: req, answer, leaked });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return report;
}
