import express from 'express';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { NONCE_PLACEHOLDER, adminCsp, adminRouter } from './admin';

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

  it('serves the built page with a policy that keeps it to this origin, a fresh nonce per load', async () => {
    writeFileSync(
      path.join(dir, 'index.html'),
      `<!doctype html><title>admin</title><meta property="csp-nonce" nonce="${NONCE_PLACEHOLDER}">`,
    );
    writeFileSync(path.join(dir, 'app.js'), 'export {};');
    const app = appServing(dir);
    const nonces = [];
    for (let load = 0; load < 2; load += 1) {
      const page = await request(app).get('/admin/');
      expect(page.status).toBe(200);
      expect(page.text).toContain('<title>admin</title>');
      const nonce = /nonce="([^"]+)"/.exec(page.text)?.[1] ?? '';
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(page.headers['content-security-policy']).toBe(adminCsp(nonce));
      expect(page.headers['cache-control']).toBe('no-store');
      nonces.push(nonce);
    }
    expect(nonces[0]).not.toBe(nonces[1]);
    expect(adminCsp('n')).toContain("script-src 'self' 'nonce-n';");
    expect(adminCsp('n')).toMatch(/style-src 'self' 'nonce-n' 'sha256-/);
    const asset = await request(app).get('/admin/app.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-security-policy']).toBe(adminCsp(null));
    expect(adminCsp(null)).not.toContain('nonce');
    expect((await request(app).get('/admin')).status).toBe(301);
  });
});
