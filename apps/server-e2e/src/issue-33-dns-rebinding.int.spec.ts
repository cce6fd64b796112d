import { http } from './testing/http';
import { trackOutput } from './testing/process-logs';
import { http10WithoutHost, rawHttp } from './testing/raw-http';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

/**
 * Issue 33, DNS rebinding and cross-site requests, on the BUILT server (SQLite): an open loopback
 * server answers a forged Host 403 on every route (REST, /trpc, /admin, /metrics, /health) and a
 * foreign Origin 403 on every request that changes state; with API keys, or with the host and
 * origin listed, both are accepted. The dashboard answers at localhost, 127.0.0.1 and [::1].
 */
const KEY = 'rebinding-key-0123456789abcdef';
const FORGED = 'attacker.example';
const FOREIGN = 'https://attacker.example';

describe('Host and Origin check (issue 33, built server)', () => {
  const workspace = tempWorkspace();
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    workspace.remove();
  });
  async function start(env: Record<string, string>): Promise<ServerProcess> {
    const server = await startServerProcess({ COGNITION_WORKSPACE_ROOT: workspace.dir, ...env });
    servers.push(server);
    return server;
  }

  describe('open loopback server (no API keys)', () => {
    let server: ServerProcess;
    let port: string;
    beforeAll(async () => {
      server = await start({});
      port = new URL(server.url).port;
    });

    it('answers a forged Host 403 on every route, naming COGNITION_ALLOWED_HOSTS; nothing is created', async () => {
      for (const path of [
        '/sessions',
        '/trpc/sessions.list',
        '/admin/',
        '/metrics',
        '/health',
        '/ready',
        '/openapi.json',
      ]) {
        const res = await rawHttp(server.url, 'GET', path, { Host: `${FORGED}:${port}` });
        expect([path, res.status, res.json?.['code']]).toEqual([path, 403, 'FORBIDDEN']);
        expect(String(res.json?.['detail'])).toContain('COGNITION_ALLOWED_HOSTS');
      }
      const write = await rawHttp(
        server.url,
        'POST',
        '/sessions',
        { Host: `${FORGED}:${port}` },
        { title: 'rebound' },
      );
      expect(write.status).toBe(403);
      const mutation = await rawHttp(
        server.url,
        'POST',
        '/trpc/sessions.create',
        { Host: FORGED },
        { json: { title: 'rebound' } },
      );
      expect(mutation.status).toBe(403);
      const list = await http(server.url, 'GET', '/sessions');
      expect(list.text).not.toContain('rebound');
    });

    it('answers a foreign Origin 403 on REST writes, deletes and tRPC mutations, naming COGNITION_CORS_ORIGINS', async () => {
      const created = await http(server.url, 'POST', '/sessions', { body: { title: 'mine' } });
      expect(created.status).toBe(201);
      const id = String(created.json?.['id']);
      const attempts = [
        await rawHttp(server.url, 'POST', '/sessions', { Origin: FOREIGN }, { title: 'csrf' }),
        await rawHttp(server.url, 'DELETE', `/sessions/${id}`, { Origin: FOREIGN }),
        await rawHttp(
          server.url,
          'POST',
          '/trpc/sessions.create',
          { Origin: FOREIGN },
          { json: { title: 'csrf' } },
        ),
        await rawHttp(server.url, 'POST', '/sessions', { Origin: 'null' }, { title: 'csrf' }),
      ];
      for (const res of attempts) {
        expect(res.status).toBe(403);
        expect(String(res.json?.['detail'])).toContain('COGNITION_CORS_ORIGINS');
      }
      expect((await http(server.url, 'GET', `/sessions/${id}`)).status).toBe(200);
      expect((await http(server.url, 'GET', '/sessions')).text).not.toContain('csrf');
      // Reading with a foreign Origin is CORS's business (no Access-Control-Allow-Origin).
      const read = await rawHttp(server.url, 'GET', '/sessions', { Origin: FOREIGN });
      expect(read.status).toBe(200);
      expect(read.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('serves curl (no Origin), pages on loopback names and probes without Host', async () => {
      expect((await http(server.url, 'POST', '/sessions', { body: {} })).status).toBe(201);
      for (const origin of [
        `http://localhost:${port}`,
        'http://127.0.0.1:5173',
        'http://[::1]:3000',
      ]) {
        const res = await rawHttp(server.url, 'POST', '/sessions', { Origin: origin }, {});
        expect([origin, res.status]).toEqual([origin, 201]);
      }
      const probe = await http10WithoutHost(server.url, '/ready');
      expect(probe).toMatch(/^HTTP\/1\.[01] 200/);
      const byIp = await rawHttp(server.url, 'GET', '/health', { Host: `10.1.2.3:${port}` });
      expect(byIp.status).toBe(200);
    });

    it('serves the dashboard at localhost, 127.0.0.1 and [::1]', async () => {
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
        const res = await rawHttp(server.url, 'GET', '/admin/', { Host: host });
        expect([host, res.status]).toEqual([host, 200]);
        expect(String(res.headers['content-type'])).toContain('text/html');
      }
    });
  });

  it('leaves Host and Origin to the API keys when keys are configured', async () => {
    const server = trackOutput('keyed', await start({ COGNITION_API_KEYS: KEY }));
    const auth = { Authorization: `Bearer ${KEY}` };
    const read = await rawHttp(server.url, 'GET', '/sessions', { ...auth, Host: FORGED });
    expect(read.status).toBe(200);
    const write = await rawHttp(
      server.url,
      'POST',
      '/sessions',
      { ...auth, Host: FORGED, Origin: FOREIGN },
      {},
    );
    expect(write.status).toBe(201);
    // Without the key the answer is about the key, whatever the Host.
    expect((await rawHttp(server.url, 'GET', '/sessions', { Host: FORGED })).status).toBe(401);
  });

  it('accepts the hosts of COGNITION_ALLOWED_HOSTS and the origins of COGNITION_CORS_ORIGINS', async () => {
    const server = trackOutput(
      'listed',
      await start({
        COGNITION_ALLOWED_HOSTS: 'cognition.test,.corp.example',
        COGNITION_CORS_ORIGINS: 'https://app.example',
      }),
    );
    const port = new URL(server.url).port;
    for (const host of [`cognition.test:${port}`, 'agents.corp.example']) {
      const res = await rawHttp(server.url, 'GET', '/admin/', { Host: host });
      expect([host, res.status]).toEqual([host, 200]);
    }
    expect((await rawHttp(server.url, 'GET', '/sessions', { Host: FORGED })).status).toBe(403);
    for (const origin of ['https://app.example', `http://cognition.test:${port}`]) {
      const res = await rawHttp(
        server.url,
        'POST',
        '/sessions',
        { Host: `cognition.test:${port}`, Origin: origin },
        {},
      );
      expect([origin, res.status]).toEqual([origin, 201]);
    }
    const foreign = await rawHttp(server.url, 'POST', '/sessions', { Origin: FOREIGN }, {});
    expect(foreign.status).toBe(403);
  });
});
