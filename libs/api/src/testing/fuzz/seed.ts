import type { IdPools } from './requests';

/** One tenant's data as the fuzz sees it: its ids, and the marker its contents carry. */
export interface SeededTenant {
  ids: IdPools;
  /** A string only this tenant's data contains (titles, contents, metadata, artifacts). */
  marker: string;
}

type Json = Record<string, unknown>;

async function call(
  baseUrl: string,
  headers: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json; text: string }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {
    // an event stream or an empty body
  }
  if (response.status >= 300) {
    throw new Error(
      `seeding: ${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`,
    );
  }
  return { status: response.status, json, text };
}

/**
 * Gives a tenant (the caller `headers` identify) real data over REST: `sessions` sessions, each
 * with one finished turn (the model must answer) and metadata, plus a private and a public
 * artifact; every title, content and value carries `marker`.
 */
export async function seedTenant(
  baseUrl: string,
  headers: Record<string, string>,
  marker: string,
  sessions = 2,
): Promise<SeededTenant> {
  const ids: IdPools = { session: [], message: [], run: [], artifact: [], agent: [], provider: [] };
  for (let i = 0; i < sessions; i += 1) {
    const created = await call(baseUrl, headers, 'POST', '/sessions', {
      title: `${marker} session ${i}`,
      metadata: { note: `${marker} metadata` },
    });
    const sessionId = String(created.json['id']);
    ids.session.push(sessionId);
    // The SSE answer ends when the run does.
    await call(baseUrl, headers, 'POST', `/sessions/${sessionId}/messages`, {
      content: `${marker} says hello ${i}`,
    });
    const messages = await call(baseUrl, headers, 'GET', `/sessions/${sessionId}/messages`);
    for (const m of (messages.json['messages'] as Json[] | undefined) ?? [])
      ids.message.push(String(m['id']));
    const runs = await call(baseUrl, headers, 'GET', `/sessions/${sessionId}/runs`);
    for (const r of (runs.json['runs'] as Json[] | undefined) ?? []) ids.run.push(String(r['id']));
    for (const visibility of ['private', 'public']) {
      const artifact = await call(baseUrl, headers, 'POST', '/artifacts', {
        name: `${marker}-${visibility}-${i}.md`,
        content: `${marker} artifact content`,
        visibility,
        session_id: sessionId,
      });
      ids.artifact.push(String(artifact.json['id']));
    }
  }
  const agents = await call(baseUrl, headers, 'GET', '/agents');
  for (const a of (agents.json['agents'] as Json[] | undefined) ?? [])
    ids.agent.push(String(a['name']));
  const providers = await call(baseUrl, headers, 'GET', '/providers');
  for (const p of (providers.json['providers'] as Json[] | undefined) ?? [])
    ids.provider.push(String(p['id']));
  return { ids, marker };
}
