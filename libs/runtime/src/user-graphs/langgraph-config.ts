import { isAbsolute, resolve, dirname } from 'node:path';
import { z } from 'zod';
import { RuntimeError } from '../errors';

/**
 * The part of `langgraph.json` (the file `langgraph dev` reads) this server uses: `graphs`
 * (`{ id: "./path.ts:exportName" }`), `env` (a file or a map, applied by the server before the
 * graphs load) and `store.index` (the store's semantic index: `embed`, `dims`, `fields`). Other keys
 * (`dependencies`, `node_version`, `dockerfile_lines`, `http`, `ui`...) describe a deployment
 * of the LangGraph platform and are accepted and ignored, as `langgraph dev` ignores most of them.
 */
const GRAPH_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * `store.index`, as LangGraph's servers read it: `embed` names the embeddings model
 * (`"<provider>:<model>"`, e.g. `"openai:text-embedding-3-small"`), `dims` their length, `fields`
 * the JSON paths embedded (default `["$"]`, the whole value). Other keys of `store` (`ttl`...)
 * are accepted and ignored.
 */
const StoreIndexSchema = z.object({
  embed: z
    .string()
    .regex(/^[^:]+:.+$/, 'expected "<provider>:<model>", e.g. "openai:text-embedding-3-small"'),
  dims: z.number().int().min(1).max(65_536),
  fields: z.array(z.string().min(1)).min(1).optional(),
});
export type StoreIndexSpec = z.output<typeof StoreIndexSchema>;

const ConfigFileSchema = z
  .object({
    graphs: z
      .record(z.string(), z.string().min(3, 'expected "./path/to/file.ts:exportName"'))
      .superRefine((graphs, ctx) => {
        for (const id of Object.keys(graphs)) {
          if (!GRAPH_ID.test(id)) {
            ctx.addIssue({
              code: 'custom',
              path: [id],
              message: 'graph ids are 1-128 letters, digits, _ . or -',
            });
          }
        }
      })
      .refine((graphs) => Object.keys(graphs).length > 0, 'lists no graph'),
    env: z.union([z.string().min(1), z.record(z.string(), z.string())]).optional(),
    store: z.object({ index: StoreIndexSchema.optional() }).passthrough().optional(),
  })
  .passthrough();

/** One graph of the file: where its module is and which export holds it. */
export interface GraphSpec {
  graphId: string;
  /** The module's absolute path (the file's entry resolved against the config's folder). */
  file: string;
  /** The export holding the graph or its factory; `default` when the entry names none. */
  exportName: string;
  /** The entry as written, for messages. */
  spec: string;
}

export interface LangGraphConfig {
  /** Absolute path of the `langgraph.json` read. */
  path: string;
  graphs: GraphSpec[];
  /** `env`: a `.env` file (absolute path) or the variables themselves. */
  env: string | Record<string, string> | null;
  /** `store.index`: the store's semantic index, null without one. */
  storeIndex: StoreIndexSpec | null;
}

/**
 * Parses the text of a `langgraph.json` found at `path`. Throws a VALIDATION_ERROR whose
 * message names the file and every offending key (`langgraph.json: graphs.agent: ...`).
 */
export function parseLangGraphConfig(text: string, path: string): LangGraphConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new RuntimeError('VALIDATION_ERROR', `${path}: not valid JSON: ${String(error)}`);
  }
  const parsed = ConfigFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.') || '(root)',
      message: issue.message,
    }));
    throw new RuntimeError(
      'VALIDATION_ERROR',
      `${path}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  }
  const folder = dirname(path);
  const graphs = Object.entries(parsed.data.graphs).map(([graphId, spec]) =>
    graphSpec(graphId, spec, folder, path),
  );
  const env = parsed.data.env;
  return {
    path,
    graphs,
    env: env === undefined ? null : typeof env === 'string' ? resolve(folder, env) : env,
    storeIndex: parsed.data.store?.index ?? null,
  };
}

function graphSpec(graphId: string, spec: string, folder: string, path: string): GraphSpec {
  // `C:\...` paths keep their drive colon: the export is after the last colon past the path.
  const colon = spec.lastIndexOf(':');
  const hasExport = colon > 1 || (colon === 1 && !isAbsolute(spec));
  const file = hasExport ? spec.slice(0, colon) : spec;
  const exportName = hasExport ? spec.slice(colon + 1) : 'default';
  if (file === '' || exportName === '') {
    throw RuntimeError.field(
      `graphs.${graphId}`,
      `${path}: expected "./path/to/file.ts:exportName", got "${spec}"`,
    );
  }
  return { graphId, file: resolve(folder, file), exportName, spec };
}
