import express from 'express';
import request from 'supertest';
import { createTestApp } from '../testing/test-app';
import { landing } from './landing';

/** Issue 32: `GET /` was a JSON 404; it now points to the dashboard and the API description. */

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('issue 32: GET /', () => {
  it('answers JSON links to curl and scripts', async () => {
    const { app } = await createTestApp();
    for (const accept of [undefined, '*/*', 'application/json']) {
      const req = request(app).get('/');
      const res = await (accept === undefined ? req : req.set('Accept', accept));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        name: 'Cognition',
        version: expect.any(String) as unknown,
        links: { admin: null, openapi: '/openapi.json', health: '/health', trpc: '/trpc' },
      });
    }
  });

  it('redirects a browser to the dashboard when it is served', async () => {
    const app = express().get('/', landing({ version: '1.2.3', admin: true }));
    const res = await request(app).get('/').set('Accept', BROWSER_ACCEPT);
    expect(res.status).toBe(302);
    expect(res.headers['location']).toBe('/admin/');
    const json = await request(app).get('/');
    expect((json.body as { links: { admin: unknown } }).links.admin).toBe('/admin/');
  });

  it('shows a browser a page of links when no dashboard is served', async () => {
    const { app } = await createTestApp();
    const res = await request(app).get('/').set('Accept', BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('href="/openapi.json"');
    expect(res.text).toContain('href="/health"');
  });
});
