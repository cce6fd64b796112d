import { Validator } from '@cfworker/json-schema';
import type { Schema } from '@cfworker/json-schema';
import type { Express } from 'express';
import request from 'supertest';
import { apiKeyFingerprint } from '../../config';
import type { OpenApiDocument } from './openapi';
import { REST_ROUTES } from './routes';
import type { TestApp } from '../../testing/test-app';
import { createTestApp } from '../../testing/test-app';

type Json = Record<string, unknown>;

function body(res: request.Response): Json {
  return res.body as Json;
}

/** Method + OpenAPI-style path of every route Express has registered. */
function expressRoutes(app: Express): string[] {
  const stack = (
    app as unknown as {
      router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
    }
  ).router.stack;
  const routes: string[] = [];
  for (const layer of stack) {
    if (!layer.route) continue;
    const path = layer.route.path.replace(/:(\w+)/g, '{$1}');
    for (const method of Object.keys(layer.route.methods)) routes.push(`${method} ${path}`);
  }
  return routes.sort();
}

function documentRoutes(doc: OpenApiDocument): string[] {
  const routes: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      if ((item as Json)[method]) routes.push(`${method} ${path}`);
    }
  }
  return routes.sort();
}

/** Inlines `#/components/schemas/*` references so the schema validates on its own. */
function deref(node: unknown, doc: OpenApiDocument): unknown {
  if (Array.isArray(node)) return node.map((item) => deref(item, doc));
  if (typeof node !== 'object' || node === null) return node;
  const ref = (node as Json)['$ref'];
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    return deref(doc.components?.schemas?.[name], doc);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, deref(value, doc)]));
}

function operation(doc: OpenApiDocument, method: string, path: string): Json {
  const op = (doc.paths?.[path] as Json | undefined)?.[method] as Json | undefined;
  if (!op) throw new Error(`no ${method} ${path} in the document`);
  return op;
}

function schemaAt(op: Json, keys: string[], doc: OpenApiDocument): Schema {
  let node: unknown = op;
  for (const key of keys) node = (node as Json | undefined)?.[key];
  if (!node) throw new Error(`no schema at ${keys.join('.')}`);
  return deref(node, doc) as Schema;
}

function validates(schema: Schema, value: unknown): { valid: boolean; errors: string[] } {
  const result = new Validator(schema, '2020-12', false).validate(value);
  return {
    valid: result.valid,
    errors: result.errors.map((e) => `${e.instanceLocation}: ${e.error}`),
  };
}

describe('GET /openapi.json', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    t = await createTestApp();
    const res = await request(t.app).get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body as OpenApiDocument;
  });
  afterAll(() => t.close());

  it('is an OpenAPI 3.1 document listing exactly the routes Express serves', () => {
    expect(doc.openapi).toBe('3.1.0');
    const registered = expressRoutes(t.app);
    expect(registered).toEqual(documentRoutes(doc));
    // Sanity: the comparison is over the real surface, not two empty lists.
    expect(registered).toEqual(
      expect.arrayContaining([
        'post /sessions',
        'get /sessions/{id}/messages/{mid}',
        'get /health',
        'get /ready',
      ]),
    );
  });

  it('declares path parameters and the list query parameters', () => {
    const get = operation(doc, 'get', '/sessions/{id}/messages/{mid}');
    const params = (get['parameters'] as { name: string; in: string }[]).map(
      (p) => `${p.in}:${p.name}`,
    );
    expect(params.sort()).toEqual(['path:id', 'path:mid']);
    const list = operation(doc, 'get', '/sessions');
    const query = (list['parameters'] as { name: string }[]).map((p) => p.name);
    expect(query.sort()).toEqual(
      ['agent_name', 'limit', 'offset', 'order', 'sort', 'status', 'title_contains'].sort(),
    );
    expect(String(list['description'])).toContain('metadata.<key>=<value>');
  });

  it('validates every route example request and rejects a broken one', () => {
    let checked = 0;
    for (const route of REST_ROUTES) {
      for (const [name, example] of Object.entries(route.request.examples ?? {})) {
        const schema = schemaAt(
          operation(doc, route.method, route.path),
          ['requestBody', 'content', 'application/json', 'schema'],
          doc,
        );
        expect({
          route: `${route.method} ${route.path}`,
          name,
          ...validates(schema, example),
        }).toMatchObject({ valid: true });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(6);
    const create = schemaAt(
      operation(doc, 'post', '/sessions'),
      ['requestBody', 'content', 'application/json', 'schema'],
      doc,
    );
    expect(validates(create, { titel: 'typo' }).valid).toBe(false);
    expect(validates(create, { config: { temperature: 9 } }).valid).toBe(false);
  });

  it('describes the responses the server really sends', async () => {
    const created = await request(t.app)
      .post('/sessions')
      .send({ title: 't', metadata: { k: 'v' }, config: { model: 'fake-model' } });
    const id = String(body(created).id);
    await t.storage.messages.create({
      sessionId: id,
      role: 'assistant',
      content: 'hello',
      toolCalls: [{ id: 'c1', name: 'ls', args: { path: '.' } }],
      tokenCount: 3,
      modelUsed: 'gpt',
    });
    const messages = await request(t.app).get(`/sessions/${id}/messages`);
    const mid = String((body(messages).messages as { id: string }[])[0]?.id);
    const exchanges: [string, string, request.Response][] = [
      ['post', '/sessions', created],
      ['get', '/sessions', await request(t.app).get('/sessions')],
      ['get', '/sessions/{id}', await request(t.app).get(`/sessions/${id}`)],
      [
        'patch',
        '/sessions/{id}',
        await request(t.app).patch(`/sessions/${id}`).send({ title: 'u' }),
      ],
      [
        'patch',
        '/sessions/{id}',
        await request(t.app).patch(`/sessions/${id}`).send({ expected_version: 1 }),
      ],
      ['get', '/sessions/{id}/messages', messages],
      [
        'get',
        '/sessions/{id}/messages/{mid}',
        await request(t.app).get(`/sessions/${id}/messages/${mid}`),
      ],
      [
        'get',
        '/sessions/{id}/messages/{mid}',
        await request(t.app).get(`/sessions/${id}/messages/nope`),
      ],
      ['get', '/health', await request(t.app).get('/health')],
      ['get', '/ready', await request(t.app).get('/ready')],
      ['post', '/sessions', await request(t.app).post('/sessions').send({ bad: true })],
    ];
    t.model.push({ text: ['streamed'] });
    const streamed = await request(t.app).post(`/sessions/${id}/messages`).send({ content: 'go' });
    const runs = await request(t.app).get(`/sessions/${id}/runs`);
    const runId = String((body(runs).runs as { id: string }[])[0]?.id);
    exchanges.push(
      ['post', '/sessions/{id}/messages', streamed],
      [
        'post',
        '/sessions/{id}/messages',
        await request(t.app).post(`/sessions/${id}/messages`).send({ content: 5 }),
      ],
      ['get', '/sessions/{id}/events', await request(t.app).get(`/sessions/${id}/events`)],
      ['post', '/sessions/{id}/abort', await request(t.app).post(`/sessions/${id}/abort`)],
      ['get', '/sessions/{id}/runs', runs],
      [
        'get',
        '/sessions/{id}/runs/{run_id}',
        await request(t.app).get(`/sessions/${id}/runs/${runId}`),
      ],
      [
        'get',
        '/sessions/{id}/runs/{run_id}',
        await request(t.app).get(`/sessions/${id}/runs/nope`),
      ],
    );
    exchanges.push(['delete', '/sessions/{id}', await request(t.app).delete(`/sessions/${id}`)]);
    exchanges.push(['get', '/sessions/{id}', await request(t.app).get(`/sessions/${id}`)]);
    const statuses = exchanges.map(([, , res]) => res.status);
    expect(statuses).toEqual([
      201, 200, 200, 200, 409, 200, 200, 404, 200, 200, 422, 200, 422, 204, 200, 200, 200, 404, 204,
      404,
    ]);
    expect(streamed.text).toContain('event: done');
    for (const [method, path, res] of exchanges) {
      const response = (operation(doc, method, path)['responses'] as Json)[String(res.status)] as
        Json | undefined;
      expect({
        method,
        path,
        status: res.status,
        documented: response !== undefined,
      }).toMatchObject({ documented: true });
      if (res.status === 204 || !response) continue;
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        expect(Object.keys(response['content'] as Json)).toEqual(['text/event-stream']);
        continue;
      }
      const schema = schemaAt(response, ['content', 'application/json', 'schema'], doc);
      expect({ method, path, status: res.status, ...validates(schema, res.body) }).toMatchObject({
        valid: true,
      });
    }
  });

  it('documents scope headers and bearer auth when they are configured', async () => {
    const KEY = 'docs-key-0123456789';
    const scoped = await createTestApp({
      scoping: { enabled: true, keys: ['user'] },
      apiKeys: [{ id: apiKeyFingerprint(KEY), key: KEY }],
    });
    try {
      const res = await request(scoped.app)
        .get('/openapi.json')
        .set('Authorization', `Bearer ${KEY}`);
      const scopedDoc = res.body as OpenApiDocument;
      const op = operation(scopedDoc, 'get', '/sessions');
      expect(op['security']).toEqual([{ bearerAuth: [] }]);
      expect(op['parameters']).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'X-Cognition-Scope-User', in: 'header', required: true }),
        ]),
      );
      expect(operation(scopedDoc, 'get', '/health')['security']).toBeUndefined();
    } finally {
      await scoped.close();
    }
  });
});
