/**
 * The texts at a JSON path of a store value, with the path syntax of LangGraph's index `fields`
 * (as its InMemoryStore reads them; the `getTextAtPath` that `@langchain/langgraph-checkpoint`
 * exports is an older, simpler one): `$` (the whole value), `a.b`, `list[0]`, `list[-1]`,
 * `list[*].text`, `*` (every value of an object or array), `{title,meta.author}` (several
 * fields). Strings, numbers and booleans give their text; objects and arrays their JSON
 * (indented by 2, as LangGraph embeds them); null and missing paths nothing.
 */
export function textsAtPath(value: unknown, path: string): string[] {
  if (path === '' || path === '$') return [JSON.stringify(value, null, 2)];
  return extract(value, tokenize(path), 0);
}

/** `a.b[0].c{d,e}` → `a`, `b`, `[0]`, `c`, `{d,e}`. */
function tokenize(path: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let i = 0;
  while (i < path.length) {
    const char = path[i] as string;
    if (char === '[' || char === '{') {
      if (current) tokens.push(current);
      current = '';
      const close = char === '[' ? ']' : '}';
      let depth = 0;
      let token = '';
      for (; i < path.length; i += 1) {
        const c = path[i] as string;
        token += c;
        if (c === char) depth += 1;
        else if (c === close && --depth === 0) break;
      }
      tokens.push(token);
      i += 1;
      continue;
    }
    if (char === '.') {
      if (current) tokens.push(current);
      current = '';
    } else current += char;
    i += 1;
  }
  if (current) tokens.push(current);
  return tokens;
}

function leaf(value: unknown): string[] {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return [String(value)];
  }
  if (value !== null && typeof value === 'object') return [JSON.stringify(value, null, 2)];
  return [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function extract(value: unknown, tokens: string[], pos: number): string[] {
  if (pos >= tokens.length) return leaf(value);
  const token = tokens[pos] as string;
  if (token.startsWith('[') && token.endsWith(']')) {
    if (!Array.isArray(value)) return [];
    const index = token.slice(1, -1);
    if (index === '*') return value.flatMap((item) => extract(item, tokens, pos + 1));
    let at = Number.parseInt(index, 10);
    if (Number.isNaN(at)) return [];
    if (at < 0) at += value.length;
    return at >= 0 && at < value.length ? extract(value[at], tokens, pos + 1) : [];
  }
  if (token.startsWith('{') && token.endsWith('}')) {
    if (!isObject(value)) return [];
    return token
      .slice(1, -1)
      .split(',')
      .map((field) => field.trim())
      .flatMap((field) => {
        let current: unknown = value;
        for (const part of tokenize(field)) {
          if (!isObject(current) || !(part in current)) return [];
          current = current[part];
        }
        return leaf(current);
      });
  }
  if (token === '*') {
    if (!isObject(value)) return [];
    return Object.values(value).flatMap((item) => extract(item, tokens, pos + 1));
  }
  return isObject(value) && token in value ? extract(value[token], tokens, pos + 1) : [];
}
