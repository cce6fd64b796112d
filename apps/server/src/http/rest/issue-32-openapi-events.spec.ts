import { Validator } from '@cfworker/json-schema';
import type { Schema } from '@cfworker/json-schema';
import { AgentEventSchema } from '@cognition/contracts';
import request from 'supertest';
import { apiKeyFingerprint } from '../../config';
import type { TestApp } from '../../testing/test-app';
import { createTestApp } from '../../testing/test-app';
import type { OpenApiDocument } from './openapi';
import { serversFor } from './openapi';

/**
 * Issue 32: the OpenAPI document types every SSE event (one schema per event, discriminated by
 * `event`, checked against the frames the server really writes), names the server it came from
 * and declares the API-key scheme whatever the configuration.
 */

type Json = Record<string, unknown>;

/** Inlines `#/components/schemas/*` references so the schema validates on its own. */
function deref(node: unknown, doc: OpenApiDocument): unknown {
  if (Array.isArray(node)) return node.map((item) => deref(item, doc));
  if (typeof node !== 'object' || node === null) return node;
  const ref = (node as Json)['$ref'];
  if (typeof ref === 'string') {
    return deref(doc.components?.schemas?.[ref.replace('#/components/schemas/', '')], doc);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, deref(value, doc)]));
}

/** The frames of an SSE body as `{id, event, data}` (data parsed), comments and `retry:` skipped. */
function framesOf(text: string): Json[] {
  const frames: Json[] = [];
  for (const block of text.split('\n\n')) {
    const frame: Json = {};
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') frame['data'] = JSON.parse(value) as unknown;
      else if (field === 'id' || field === 'event') frame[field] = value;
    }
    if (frame['event'] !== undefined) frames.push(frame);
  }
  return frames;
}

function operation(doc: OpenApiDocument, method: string, path: string): Json {
  return (doc.paths?.[path] as Json)[method] as Json;
}

describe('issue 32: the OpenAPI document of the event streams', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await request(t.app).get('/openapi.json')).body as OpenApiDocument;
  });

  it('has one schema per event type, discriminated by `event`', () => {
    const union = doc.components?.schemas?.['AgentEvent'] as Json;
    const mapping = (union['discriminator'] as { propertyName: string; mapping: Json }).mapping;
    expect((union['discriminator'] as Json)['propertyName']).toBe('event');
    const types = AgentEventSchema.options.map((option) => option.shape.type.value);
    expect(Object.keys(mapping).sort()).toEqual([...types].sort());
    expect(mapping['tool_call']).toBe('#/components/schemas/ToolCallEvent');
    const data = doc.components?.schemas?.['ToolResultEventData'] as Json;
    expect(data['required']).toEqual(['tool_call_id', 'output', 'exit_code', 'at']);
    for (const path of ['/sessions/{id}/messages', '/sessions/{id}/events']) {
      const method = path.endsWith('messages') ? 'post' : 'get';
      const content = ((operation(doc, method, path)['responses'] as Json)['200'] as Json)[
        'content'
      ] as Json;
      expect(content['text/event-stream']).toEqual({
        schema: { $ref: '#/components/schemas/AgentEvent' },
      });
    }
  });

  it('describes every frame a streamed turn with a tool call writes', async () => {
    const id = String(
      ((await request(t.app).post('/sessions').send({ title: 'e' })).body as Json)['id'],
    );
    t.model.push(
      { toolCalls: [{ id: 'c1', name: 'ls', args: { path: '.' } }] },
      { text: ['Here ', 'it is'] },
    );
    const streamed = await request(t.app).post(`/sessions/${id}/messages`).send({ content: 'go' });
    const frames = framesOf(streamed.text);
    const replayed = framesOf(
      (
        await request(t.app)
          .get(`/sessions/${id}/events`)
          .set('Last-Event-ID', String(frames[1]?.['id']))
      ).text,
    );
    const all = [...frames, ...replayed];
    expect(all.map((f) => f['event'])).toEqual(
      expect.arrayContaining(['status', 'tool_call', 'tool_result', 'token', 'usage', 'done']),
    );
    expect(replayed[0]?.['event']).toBe('reconnected');
    // The replay carries each event's time of emission, the one it was streamed with.
    const streamedAt = new Map(frames.map((f) => [f['id'], (f['data'] as Json)['at']]));
    const stored = replayed.slice(1);
    expect(stored.length).toBeGreaterThan(0);
    for (const frame of stored) {
      expect((frame['data'] as Json)['at']).toBe(streamedAt.get(frame['id']));
    }
    const validator = new Validator(
      deref(doc.components?.schemas?.['AgentEvent'], doc) as Schema,
      '2020-12',
      false,
    );
    for (const frame of all) {
      const result = validator.validate(frame);
      expect({ frame, errors: result.errors.map((e) => e.error) }).toMatchObject({ errors: [] });
    }
    // A frame whose data does not fit its event is refused (the discriminator is not decoration).
    const wrong = { id: 'r:1', event: 'token', data: { output: 'x', exit_code: 0 } };
    expect(validator.validate(wrong).valid).toBe(false);
  });

  it('declares the API-key scheme without keys (optional) and with keys (required)', async () => {
    expect(doc.components?.securitySchemes?.['bearerAuth']).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(operation(doc, 'get', '/sessions')['security']).toEqual([{ bearerAuth: [] }, {}]);
    expect(operation(doc, 'get', '/health')['security']).toBeUndefined();
    const KEY = 'docs-key-0123456789';
    const keyed = await createTestApp({ apiKeys: [{ id: apiKeyFingerprint(KEY), key: KEY }] });
    const keyedDoc = (
      await request(keyed.app).get('/openapi.json').set('Authorization', `Bearer ${KEY}`)
    ).body as OpenApiDocument;
    expect(operation(keyedDoc, 'get', '/sessions')['security']).toEqual([{ bearerAuth: [] }]);
  });

  it('names the server the document was requested from', async () => {
    // An open server answers only loopback names and the hosts it lists (issue 33).
    const named = await createTestApp({ network: { allowedHosts: ['api.example.test'] } });
    try {
      await namesTheServer(named.app);
    } finally {
      await named.close();
    }
  });

  async function namesTheServer(app: TestApp['app']): Promise<void> {
    const res = await request(app).get('/openapi.json').set('Host', 'api.example.test:8443');
    expect((res.body as Json)['servers']).toEqual([
      { url: 'http://api.example.test:8443', description: expect.any(String) as unknown },
    ]);
    const proxied = await request(app)
      .get('/openapi.json')
      .set('Host', 'api.example.test')
      .set('X-Forwarded-Proto', 'https');
    expect(((proxied.body as Json)['servers'] as Json[])[0]?.['url']).toBe(
      'https://api.example.test',
    );
    // Anything that is not a host falls back to a URL relative to the document.
    expect(serversFor({ headers: { host: 'evil.test/path?' } })[0]?.url).toBe('/');
    expect(serversFor({ headers: {}, secure: true })[0]?.url).toBe('/');
    expect(serversFor({ headers: { host: '[::1]:8000' }, secure: true })[0]?.url).toBe(
      'https://[::1]:8000',
    );
  }
});
