/** A response as curl would show it: status, headers, parsed JSON body (or text). */
export interface HttpResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON body, or undefined when the body is empty or not JSON. */
  json: Record<string, unknown> | undefined;
}

export interface HttpOptions {
  headers?: Record<string, string>;
  /** Serialized as JSON with Content-Type: application/json. */
  body?: unknown;
  /** Sent as is (for malformed JSON and odd bytes). */
  rawBody?: string;
}

/** One raw HTTP exchange with the server (global fetch, no client library). */
export async function http(
  baseUrl: string,
  method: string,
  path: string,
  options: HttpOptions = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.rawBody !== undefined) {
    body = options.rawBody;
    headers['Content-Type'] ??= 'application/json';
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
