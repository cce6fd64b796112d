import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An attribute value as OTLP/JSON encodes it. */
interface OtlpAnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpAnyValue }[];
  status?: { code?: number; message?: string };
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpAnyValue }[] };
    scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[];
  }[];
}

/** A received span, decoded: ids as hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** undefined for a root span. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  scope: string | undefined;
  service: string | undefined;
  attributes: Record<string, string | number | boolean>;
  status: { code: number; message?: string };
}

function plain(value: OtlpAnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return '';
}

/** One field of a protobuf message: varints as numbers, fixed64 and length-delimited as bytes. */
interface ProtoField {
  field: number;
  value: number | Buffer;
}

/** Decodes the fields of one protobuf message (enough of the wire format for OTLP traces). */
function protoFields(buffer: Buffer): ProtoField[] {
  const fields: ProtoField[] = [];
  let offset = 0;
  const varint = (): number => {
    let result = 0;
    let factor = 1;
    for (;;) {
      const byte = buffer[offset] ?? 0;
      offset += 1;
      result += (byte & 0x7f) * factor;
      if (byte < 0x80) return result;
      factor *= 128;
    }
  };
  while (offset < buffer.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    switch (key % 8) {
      case 0:
        fields.push({ field, value: varint() });
        break;
      case 1:
        fields.push({ field, value: buffer.subarray(offset, offset + 8) });
        offset += 8;
        break;
      case 2: {
        const length = varint();
        fields.push({ field, value: buffer.subarray(offset, offset + length) });
        offset += length;
        break;
      }
      case 5:
        fields.push({ field, value: buffer.subarray(offset, offset + 4) });
        offset += 4;
        break;
      default:
        throw new Error(`unsupported protobuf wire type ${key % 8}`);
    }
  }
  return fields;
}

function bytesOf(fields: ProtoField[], field: number): Buffer[] {
  return fields.flatMap((f) => (f.field === field && Buffer.isBuffer(f.value) ? [f.value] : []));
}

function numberOf(fields: ProtoField[], field: number): number | undefined {
  const found = fields.find((f) => f.field === field && typeof f.value === 'number');
  return found?.value as number | undefined;
}

/** `KeyValue` messages (opentelemetry.proto.common.v1) as OTLP/JSON shapes. */
function protoAttributes(messages: Buffer[]): { key: string; value: OtlpAnyValue }[] {
  return messages.map((message) => {
    const kv = protoFields(message);
    const any = protoFields(bytesOf(kv, 2)[0] ?? Buffer.alloc(0));
    const string = bytesOf(any, 1)[0];
    const bool = numberOf(any, 2);
    const int = numberOf(any, 3);
    const double = bytesOf(any, 4)[0];
    const value: OtlpAnyValue =
      string !== undefined
        ? { stringValue: string.toString('utf8') }
        : bool !== undefined
          ? { boolValue: bool === 1 }
          : int !== undefined
            ? { intValue: int }
            : double !== undefined
              ? { doubleValue: double.readDoubleLE(0) }
              : {};
    return { key: bytesOf(kv, 1)[0]?.toString('utf8') ?? '', value };
  });
}

/** An `ExportTraceServiceRequest` in protobuf, as the JSON shape the receiver reads. */
function decodeProtobufExport(body: Buffer): OtlpExport {
  return {
    resourceSpans: bytesOf(protoFields(body), 1).map((resourceSpans) => {
      const rs = protoFields(resourceSpans);
      const resource = protoFields(bytesOf(rs, 1)[0] ?? Buffer.alloc(0));
      return {
        resource: { attributes: protoAttributes(bytesOf(resource, 1)) },
        scopeSpans: bytesOf(rs, 2).map((scopeSpans) => {
          const ss = protoFields(scopeSpans);
          const scope = protoFields(bytesOf(ss, 1)[0] ?? Buffer.alloc(0));
          return {
            scope: { name: bytesOf(scope, 1)[0]?.toString('utf8') ?? '' },
            spans: bytesOf(ss, 2).map((span): OtlpSpan => {
              const sp = protoFields(span);
              const status = protoFields(bytesOf(sp, 15)[0] ?? Buffer.alloc(0));
              const message = bytesOf(status, 2)[0]?.toString('utf8');
              return {
                traceId: bytesOf(sp, 1)[0]?.toString('hex') ?? '',
                spanId: bytesOf(sp, 2)[0]?.toString('hex') ?? '',
                parentSpanId: bytesOf(sp, 4)[0]?.toString('hex') ?? '',
                name: bytesOf(sp, 5)[0]?.toString('utf8') ?? '',
                kind: numberOf(sp, 6) ?? 0,
                attributes: protoAttributes(bytesOf(sp, 9)),
                status: { code: numberOf(status, 3) ?? 0, ...(message ? { message } : {}) },
              };
            }),
          };
        }),
      };
    }),
  };
}

function attributes(list: { key: string; value: OtlpAnyValue }[] = []) {
  return Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));
}

/**
 * An in-process OTLP/HTTP receiver on loopback: every POST to `/v1/traces`, JSON or protobuf
 * (`application/x-protobuf`), is decoded into `spans`; anything else is a 404. `endpoint` is what `OTEL_EXPORTER_OTLP_ENDPOINT`
 * takes.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.statusCode = 404;
        res.end();
        return;
      }
      const contentType = req.headers['content-type'] ?? '';
      contentTypes.push(contentType);
      const raw = Buffer.concat(chunks);
      const body =
        contentType === 'application/x-protobuf'
          ? decodeProtobufExport(raw)
          : (JSON.parse(raw.toString('utf8')) as OtlpExport);
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = attributes(resourceSpans.resource?.attributes)['service.name'];
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              scope: scopeSpans.scope?.name,
              service: typeof service === 'string' ? service : undefined,
              attributes: attributes(span.attributes),
              status: {
                code: span.status?.code ?? 0,
                ...(span.status?.message ? { message: span.status.message } : {}),
              },
            });
          }
        }
      }
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
