import express from 'express';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ADMIN_CSP, adminRouter } from './admin';

function appServing(dir: string) {
  return express().use('/admin', adminRouter(dir));
}

describe('/admin (the dashboard)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cognition-admin-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says how to build it when it is not built, instead of a bare 404', async () => {
    const res = await request(appServing(path.join(dir, 'missing'))).get('/admin/');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
    expect(String((res.body as { detail: unknown }).detail)).toContain('node apps/admin/build.mjs');
  });

  it('serves the built page with a policy that keeps it to this origin', async () => {
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>admin</title>');
    const app = appServing(dir);
    const page = await request(app).get('/admin/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>admin</title>');
    expect(page.headers['content-security-policy']).toBe(ADMIN_CSP);
    expect(ADMIN_CSP).toContain("script-src 'self'");
    expect((await request(app).get('/admin')).status).toBe(301);
  });
});
