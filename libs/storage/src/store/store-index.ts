import type { PutOperation } from '@langchain/langgraph-checkpoint';
import { StorageError } from '../errors';
import { textsAtPath } from './store-paths';

/**
 * The store's semantic index (LangGraph's `IndexConfig`, what `langgraph.json`'s `store.index`
 * configures): texts taken from each item at `fields` are embedded when the item is written, one
 * vector per field path, and a search with `query` ranks items by the cosine similarity of their
 * best vector to the query's. Every backend keeps the vectors beside its items and scores them
 * exactly (a scan: see docs/langgraph-api.md, "Semantic search", for why and how far it scales).
 */

/** What turns texts into vectors: LangChain's `Embeddings` fits (`embedDocuments`, `embedQuery`). */
export interface StoreEmbedder {
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

export interface StoreIndexConfig {
  /** Dimensions of every vector; a vector of another length is refused. */
  dims: number;
  embed: StoreEmbedder;
  /** JSON paths of the texts to embed (LangGraph's syntax); default `["$"]`, the whole value. */
  fields?: string[];
}

/** One vector of an item: the field path it was taken from (`text`, `tags.1`), float32 values. */
export interface ItemVector {
  field: string;
  vector: Float32Array;
}

/**
 * The field paths and texts a put embeds, as LangGraph's stores take them: the put's own
 * `index` list, or the configuration's `fields` when it has none; `index: false` embeds nothing.
 * A path that yields several texts (`tags[*]`) gives `path.0`, `path.1`, …
 */
export function textsToEmbed(
  value: Record<string, unknown>,
  index: PutOperation['index'],
  fields: readonly string[] = ['$'],
): { field: string; text: string }[] {
  if (index === false) return [];
  const paths = index ?? fields;
  const out: { field: string; text: string }[] = [];
  for (const path of paths) {
    const texts = textsAtPath(value, path);
    if (texts.length === 1) out.push({ field: path, text: texts[0] ?? '' });
    else texts.forEach((text, i) => out.push({ field: `${path}.${i}`, text }));
  }
  return out;
}

function unavailable(what: string, error: unknown): StorageError {
  const cause = error instanceof Error ? error.message : String(error);
  return new StorageError('UNAVAILABLE', `Store index: cannot embed ${what}: ${cause}`, {
    cause: error,
  });
}

function toVector(values: unknown, dims: number, what: string): Float32Array {
  if (!Array.isArray(values) || values.length !== dims) {
    const got = Array.isArray(values) ? `${values.length} dimensions` : typeof values;
    throw new StorageError(
      'UNAVAILABLE',
      `Store index: the embedder answered ${got} for ${what}; the index has dims ${dims}`,
    );
  }
  return Float32Array.from(values as number[]);
}

/** The index of one store: embeds puts and queries, checking every vector's length. */
export class StoreIndex {
  readonly dims: number;
  readonly fields: readonly string[];

  constructor(private readonly config: StoreIndexConfig) {
    if (!Number.isInteger(config.dims) || config.dims <= 0) {
      throw new StorageError('VALIDATION_ERROR', 'Store index: dims must be a positive integer', {
        issues: [{ path: 'dims', message: 'must be a positive integer' }],
      });
    }
    this.dims = config.dims;
    this.fields = config.fields ?? ['$'];
  }

  /**
   * The vectors of each put (same order; deletes get none), in one call to the embedder for
   * every distinct text of the batch.
   */
  async embedPuts(puts: readonly PutOperation[]): Promise<ItemVector[][]> {
    const wanted = puts.map((put) =>
      put.value === null ? [] : textsToEmbed(put.value, put.index, this.fields),
    );
    const distinct = [...new Set(wanted.flat().map((entry) => entry.text))];
    if (distinct.length === 0) return wanted.map(() => []);
    let embedded: number[][];
    try {
      embedded = await this.config.embed.embedDocuments(distinct);
    } catch (error) {
      throw unavailable('the items written', error);
    }
    if (!Array.isArray(embedded) || embedded.length !== distinct.length) {
      throw unavailable('the items written', new Error('the embedder answered too few vectors'));
    }
    const byText = new Map(
      distinct.map((text, i) => [text, toVector(embedded[i], this.dims, 'an item')]),
    );
    return wanted.map((entries) =>
      entries.map(({ field, text }) => ({ field, vector: byText.get(text) as Float32Array })),
    );
  }

  async embedQuery(query: string): Promise<Float32Array> {
    let values: number[];
    try {
      values = await this.config.embed.embedQuery(query);
    } catch (error) {
      throw unavailable('the query', error);
    }
    return toVector(values, this.dims, 'the query');
  }
}

/** Cosine similarity (0 when either vector is all zeros, or their lengths differ). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** A vector as stored by the database backends: its float32 values, little-endian. */
export function encodeVector(vector: Float32Array): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return bytes;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function decodeVector(bytes: Uint8Array): Float32Array {
  const length = Math.floor(bytes.byteLength / 4);
  // The common case: a copy of the bytes is already the array (one memcpy, no per-value call).
  // `new Uint8Array(view)` copies; a Buffer's `slice` would not (it shares the driver's pool).
  if (LITTLE_ENDIAN) return new Float32Array(new Uint8Array(bytes.subarray(0, length * 4)).buffer);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(length);
  for (let i = 0; i < length; i += 1) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}

/**
 * The best score of each item (its closest vector), highest first; ties keep the order of
 * `vectors`. Items are named by `id`; a vector of another length than the query scores nothing
 * (an index whose dims changed: re-put the item).
 */
export function rankByVectors(
  query: Float32Array,
  vectors: Iterable<{ id: string; vector: Float32Array }>,
): { id: string; score: number }[] {
  const best = new Map<string, number>();
  for (const { id, vector } of vectors) {
    if (vector.length !== query.length) continue;
    const score = cosineSimilarity(query, vector);
    const previous = best.get(id);
    if (previous === undefined || score > previous) best.set(id, score);
  }
  return [...best.entries()]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score);
}
