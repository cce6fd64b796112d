import request from 'supertest';
import { apiKeyFingerprint } from '../config';
import type { TestApp } from '../testing/test-app';
import { createTestApp } from '../testing/test-app';
import { checkHostAndOrigin, hostCheckEnabled } from './host-check';
import type { HostCheckOptions } from './host-check';

const OPEN: HostCheckOptions = { allowedHosts: [], corsOrigins: [] };

function verdict(
  headers: Record<string, string>,
  method = 'POST',
  options: HostCheckOptions = OPEN,
): boolean {
  return checkHostAndOrigin({ method, headers }, options).ok;
}

describe('checkHostAndOrigin', () => {
  it('accepts loopback names and IP addresses with any port, refuses other names', () => {
    for (const host of [
      'localhost:8000',
      'LOCALHOST',
      'app.localhost:5173',
      '127.0.0.1:8000',
      '127.0.0.2',
      '[::1]:8000',
      '10.0.0.5:8000',
      '[2001:db8::1]',
    ]) {
      expect([host, verdict({ host }, 'GET')]).toEqual([host, true]);
    }
    for (const host of [
      'attacker.example:8797',
      'localhost.attacker.example',
      '127.0.0.1.nip.io',
      'evil@127.0.0.1',
      'a b',
    ]) {
      expect([host, verdict({ host }, 'GET')]).toEqual([host, false]);
    }
  });

  it('lets a request without Host through (HTTP/1.0: no browser sends one)', () => {
    expect(verdict({}, 'GET')).toBe(true);
  });

  it('accepts listed hosts: exact, a domain with its subdomains, or any', () => {
    const listed = { allowedHosts: ['cognition.test', '.corp.example'], corsOrigins: [] };
    expect(verdict({ host: 'cognition.test:8000' }, 'GET', listed)).toBe(true);
    expect(verdict({ host: 'a.corp.example' }, 'GET', listed)).toBe(true);
    expect(verdict({ host: 'corp.example' }, 'GET', listed)).toBe(true);
    expect(verdict({ host: 'other.test' }, 'GET', listed)).toBe(false);
    expect(verdict({ host: 'other.test' }, 'GET', { allowedHosts: ['*'], corsOrigins: [] })).toBe(
      true,
    );
  });

  it('checks Origin on state-changing methods only', () => {
    const foreign = { host: 'localhost:8000', origin: 'https://attacker.example' };
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect([method, verdict(foreign, method)]).toEqual([method, false]);
    }
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      expect([method, verdict(foreign, method)]).toEqual([method, true]);
    }
  });

  it('accepts loopback pages, the own origin, listed hosts and CORS origins; refuses null', () => {
    const at = (origin: string, host = '127.0.0.1:8000', options: HostCheckOptions = OPEN) =>
      verdict({ host, origin }, 'POST', options);
    expect(at('http://localhost:5173')).toBe(true);
    expect(at('http://127.0.0.1:8000')).toBe(true);
    expect(at('http://[::1]:3000')).toBe(true);
    // The dashboard served on a LAN address, calling its own server.
    expect(at('http://10.0.0.5:8000', '10.0.0.5:8000')).toBe(true);
    expect(
      at('https://cognition.example', 'cognition.example', {
        allowedHosts: ['cognition.example'],
        corsOrigins: [],
      }),
    ).toBe(true);
    // Another page on that address is another origin.
    expect(at('http://10.0.0.5:9999', '10.0.0.5:8000')).toBe(false);
    expect(at('http://203.0.113.7')).toBe(false);
    expect(at('null')).toBe(false);
    expect(at('not an origin')).toBe(false);
    expect(at('https://app.example.com')).toBe(false);
    expect(
      at('https://app.example.com', undefined, {
        allowedHosts: [],
        corsOrigins: ['https://app.example.com'],
      }),
    ).toBe(true);
    expect(
      at('https://anything.example', undefined, { allowedHosts: [], corsOrigins: ['*'] }),
    ).toBe(true);
  });

  it('runs without API keys, or with keys once hosts are listed; never with *', () => {
    expect(hostCheckEnabled(0, [])).toBe(true);
    expect(hostCheckEnabled(2, [])).toBe(false);
    expect(hostCheckEnabled(2, ['cognition.example'])).toBe(true);
    expect(hostCheckEnabled(0, ['*'])).toBe(false);
  });
});

describe('the Host / Origin check in the app', () => {
  describe('open (no API keys)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });

    it('answers a forged Host 403 on every kind of route, naming COGNITION_ALLOWED_HOSTS', async () => {
      for (const path of [
        '/sessions',
        '/health',
        '/trpc/sessions.list',
        '/openapi.json',
        '/nope',
      ]) {
        const res = await request(t.app).get(path).set('Host', 'attacker.example:8797');
        expect([path, res.status]).toEqual([path, 403]);
        expect(res.body).toMatchObject({ code: 'FORBIDDEN' });
        expect((res.body as { detail: string }).detail).toContain('COGNITION_ALLOWED_HOSTS');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
      }
      const created = await request(t.app)
        .post('/sessions')
        .set('Host', 'attacker.example:8797')
        .send({ title: 'rebound' });
      expect(created.status).toBe(403);
      const sessions = await request(t.app).get('/sessions').set('Host', 'localhost');
      expect(JSON.stringify(sessions.body)).not.toContain('rebound');
    });

    it('answers a foreign Origin 403 on REST writes and tRPC mutations, naming COGNITION_CORS_ORIGINS', async () => {
      const rest = await request(t.app)
        .post('/sessions')
        .set('Origin', 'https://attacker.example')
        .send({ title: 'csrf' });
      expect(rest.status).toBe(403);
      expect((rest.body as { detail: string }).detail).toContain('COGNITION_CORS_ORIGINS');
      const trpc = await request(t.app)
        .post('/trpc/sessions.create')
        .set('Origin', 'https://attacker.example')
        .set('Content-Type', 'text/plain')
        .send(JSON.stringify({ json: { title: 'csrf' } }));
      expect(trpc.status).toBe(403);
    });

    it('serves curl (no Origin), loopback pages and reads with any Origin', async () => {
      expect((await request(t.app).post('/sessions').send({})).status).toBe(201);
      const dashboard = await request(t.app)
        .post('/sessions')
        .set('Host', 'localhost:8000')
        .set('Origin', 'http://localhost:8000')
        .send({});
      expect(dashboard.status).toBe(201);
      const read = await request(t.app).get('/sessions').set('Origin', 'https://attacker.example');
      expect(read.status).toBe(200);
    });
  });

  describe('with API keys', () => {
    const key = 'host-check-key-0123456789';
    const apiKeys = [{ id: apiKeyFingerprint(key), key }];

    it('leaves Host and Origin to the keys', async () => {
      const t = await createTestApp({ apiKeys });
      const forged = await request(t.app).get('/sessions').set('Host', 'attacker.example');
      expect(forged.status).toBe(401);
      const keyed = await request(t.app)
        .post('/sessions')
        .set('Host', 'cognition.example')
        .set('Origin', 'https://app.example')
        .set('Authorization', `Bearer ${key}`)
        .send({});
      expect(keyed.status).toBe(201);
    });

    it('checks them again once hosts are listed', async () => {
      const t = await createTestApp({ apiKeys, network: { allowedHosts: ['cognition.example'] } });
      const auth = { Authorization: `Bearer ${key}` };
      expect(
        (await request(t.app).get('/sessions').set(auth).set('Host', 'cognition.example')).status,
      ).toBe(200);
      expect(
        (await request(t.app).get('/sessions').set(auth).set('Host', 'other.example')).status,
      ).toBe(403);
    });
  });
});
