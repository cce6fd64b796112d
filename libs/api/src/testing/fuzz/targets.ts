import { z } from 'zod';
import { appRouter } from '../../routers/app';
import type { JsonSchema } from './schema-arbitrary';

/** One parameter of a REST operation, as the OpenAPI document declares it. */
export interface FuzzParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

/** One thing the fuzz can call: a REST operation or a tRPC procedure. */
export type FuzzTarget =
  | {
      kind: 'rest';
      method: string;
      /** OpenAPI path template, e.g. `/sessions/{id}`. */
      path: string;
      parameters: FuzzParameter[];
      /** The JSON request body's schema, when the operation takes one. */
      body?: JsonSchema;
    }
  | {
      kind: 'trpc';
      /** e.g. `sessions.get` */
      path: string;
      type: 'query' | 'mutation' | 'subscription';
      input?: JsonSchema;
    };

export function targetName(target: FuzzTarget): string {
  return target.kind === 'rest'
    ? `${target.method.toUpperCase()} ${target.path}`
    : `trpc ${target.type} ${target.path}`;
}

interface OpenApiOperation {
  parameters?: (FuzzParameter & { $ref?: string })[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

/** Every operation of the server's OpenAPI document (`GET /openapi.json`). */
export function restTargets(document: unknown): FuzzTarget[] {
  const paths = (document as { paths?: Record<string, Record<string, OpenApiOperation>> }).paths;
  const targets: FuzzTarget[] = [];
  for (const [path, operations] of Object.entries(paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const body = operation.requestBody?.content?.['application/json']?.schema;
      targets.push({
        kind: 'rest',
        method,
        path,
        parameters: (operation.parameters ?? []).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required,
          schema: p.schema,
        })),
        ...(body ? { body } : {}),
      });
    }
  }
  return targets;
}

interface ProcedureDef {
  type: 'query' | 'mutation' | 'subscription';
  inputs: unknown[];
}

/**
 * Every procedure of the tRPC router, each input as JSON Schema (`z.toJSONSchema`, input side;
 * what JSON Schema cannot say, e.g. transforms, becomes "anything").
 */
export function trpcTargets(): FuzzTarget[] {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, unknown> } })
    ._def.procedures;
  const targets: FuzzTarget[] = [];
  for (const [path, procedure] of Object.entries(procedures)) {
    const def = (procedure as { _def: ProcedureDef })._def;
    const parser = def.inputs[0];
    let input: JsonSchema | undefined;
    if (parser instanceof z.ZodType) {
      input = z.toJSONSchema(parser, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    }
    targets.push({ kind: 'trpc', path, type: def.type, ...(input ? { input } : {}) });
  }
  return targets;
}
