/**
 * A graph run's chunks as JSON, what its `graph` events store (graph-run.ts). On the hot path:
 * a streamed answer is one `messages` chunk per token.
 */

/**
 * The JSON of LangGraph's metadata of `messages` chunks, by the metadata object: LangGraph's
 * messages handler makes one per model call and passes that same object with every chunk of
 * the call, so its JSON is made once per call instead of once per token.
 */
const metadataJson = new WeakMap<object, unknown>();

/** The data of one chunk of `mode` as JSON (see {@link toJson}). */
export function chunkJson(mode: string, data: unknown): unknown {
  if (mode !== 'messages' || !Array.isArray(data) || data.length !== 2) return toJson(data);
  const [message, metadata] = data as [unknown, unknown];
  if (metadata === null || typeof metadata !== 'object') return toJson(data);
  let json = metadataJson.get(metadata);
  if (json === undefined) {
    json = toJson(metadata);
    metadataJson.set(metadata, json);
  }
  return [toJson(message), json];
}

/**
 * A chunk as JSON: LangChain messages in their dict form with their `type` (what the SDK
 * reads), dates as ISO strings, functions and `undefined` left out (as object values; `null`
 * in arrays and alone). Loops rather than `Object.entries`/`fromEntries`: this runs per token.
 */
export function toJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'function' || value === undefined ? null : value;
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i += 1) out[i] = toJson(value[i]);
    return out;
  }
  if (value instanceof Date) return value.toISOString();
  const message = value as { getType?: () => string; toDict?: () => { data: unknown } };
  if (typeof message.getType === 'function' && typeof message.toDict === 'function') {
    const data = toJson(message.toDict().data) as Record<string, unknown>;
    const name = value.constructor.name;
    // A fresh object of ours: `type` set in place keeps the key order the spread gave.
    data['type'] = name.endsWith('Chunk') ? name : message.getType();
    return data;
  }
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const v = source[key];
    if (v === undefined || typeof v === 'function') continue;
    // An own `__proto__` key stays a key (assignment would set the prototype).
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: toJson(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = toJson(v);
    }
  }
  return out;
}
