import request from 'supertest';
import type { TestApp } from '../../../testing/test-app';
import { createTestApp } from '../../../testing/test-app';

type Json = Record<string, unknown>;
interface Page {
  hits: Json[];
  total: number;
  has_more: boolean;
}

const USER = 'X-Cognition-Scope-User';

let t: TestApp;
let mine: string;
let theirs: string;

beforeAll(async () => {
  t = await createTestApp({ scoping: { enabled: true, keys: ['user'] } });
  const create = async (user: string, title: string) =>
    String(
      ((await request(t.app).post('/sessions').set(USER, user).send({ title })).body as Json).id,
    );
  mine = await create('alice', 'Trip planning');
  theirs = await create('bob', 'Other trip');
  for (const [sessionId, role, content] of [
    [mine, 'user', 'Which train goes to Lyon?'],
    [mine, 'assistant', 'The TGV train to Lyon leaves at 9:00; the train takes two hours.'],
    [mine, 'user', 'And to Marseille?'],
    [theirs, 'user', 'train to Lyon for bob'],
  ] as const) {
    await t.storage.messages.create({ sessionId, role, content });
  }
});

afterAll(async () => {
  await t.close();
});

describe('recall search over REST', () => {
  it('GET /messages/search: ranked hits with snippet and session, only the caller’s', async () => {
    const res = await request(t.app).get('/messages/search?q=train%20lyon').set(USER, 'alice');
    expect(res.status).toBe(200);
    const page = res.body as Page;
    expect(page).toMatchObject({ total: 2, has_more: false });
    for (const hit of page.hits) {
      expect(hit).toMatchObject({ session_id: mine, session_title: 'Trip planning' });
      expect(String(hit.snippet)).toMatch(/\[train\]/);
    }
    expect(page.hits.map((h) => h.role).sort()).toEqual(['assistant', 'user']);
    expect(Number(page.hits[0]?.rank)).toBeGreaterThanOrEqual(Number(page.hits[1]?.rank));
    expect(typeof page.hits[0]?.rank).toBe('number');
    expect(String(page.hits[0]?.created_at)).toMatch(/Z$/);
    const bob = await request(t.app).get('/messages/search?q=lyon').set(USER, 'bob');
    expect((bob.body as Page).hits.map((h) => h.session_id)).toEqual([theirs]);
    const filtered = await request(t.app)
      .get(`/messages/search?q=lyon&role=user&session_id=${mine}&limit=1`)
      .set(USER, 'alice');
    expect(filtered.body).toMatchObject({ total: 1, has_more: false });
    const paged = await request(t.app).get('/messages/search?q=train&limit=1').set(USER, 'alice');
    expect(paged.body).toMatchObject({ total: 2, has_more: true });
    const future = await request(t.app)
      .get('/messages/search?q=train&from=2100-01-01T00:00:00Z')
      .set(USER, 'alice');
    expect((future.body as Page).total).toBe(0);
  });

  it('GET /sessions/{id}/messages/search is not a message id, and 404s another tenant’s session', async () => {
    const res = await request(t.app)
      .get(`/sessions/${mine}/messages/search?q=marseille`)
      .set(USER, 'alice');
    expect(res.status).toBe(200);
    expect((res.body as Page).hits.map((h) => h.role)).toEqual(['user']);
    const other = await request(t.app)
      .get(`/sessions/${theirs}/messages/search?q=lyon`)
      .set(USER, 'alice');
    expect(other.status).toBe(404);
    const viaParam = await request(t.app)
      .get(`/messages/search?q=lyon&session_id=${theirs}`)
      .set(USER, 'alice');
    expect(viaParam.status).toBe(404);
  });

  it('answers a missing or empty q, and bad filters, with 422 naming the field', async () => {
    for (const [path, field] of [
      ['/messages/search', 'query.q'],
      ['/messages/search?q=', 'q'],
      ['/messages/search?q=%3F%21', 'q'],
      [`/sessions/${mine}/messages/search`, 'query.q'],
      [`/sessions/${mine}/messages/search?q=`, 'q'],
      ['/messages/search?q=x&role=robot', 'query.role'],
      ['/messages/search?q=x&limit=0', 'query.limit'],
      ['/messages/search?q=x&from=soon', 'query.from'],
      ['/messages/search?q=x&unknown=1', 'query'],
    ] as const) {
      const res = await request(t.app).get(path).set(USER, 'alice');
      expect({ path, status: res.status }).toEqual({ path, status: 422 });
      const paths = ((res.body as { errors: { path: string }[] }).errors ?? []).map((e) => e.path);
      expect({ path, named: paths.some((p) => p.startsWith(field)) }).toEqual({
        path,
        named: true,
      });
    }
  });
});
