import type { FuzzReport } from '@cognition/api/testing';
import {
  describeRequest,
  restTargets,
  runFuzz,
  seedTenant,
  trpcTargets,
} from '@cognition/api/testing';
import { FakeOpenAIServer, postMessage, startAgentServer } from './testing/agent-server';
import { http } from './testing/http';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 31 item 3, the `npm test` size: hostile requests generated from the built server's
 * OpenAPI document (every REST operation) and from the tRPC router (every procedure), sent as
 * tenant alice while tenant bob's data sits beside hers. Goal: no answer >= 500, no hang, no
 * dropped connection, every input error names its field, nothing of bob's in any answer, and
 * the server healthy afterwards. On SQLite and PostgreSQL (a NUL character in an id reached
 * PostgreSQL only). Seeded: ISSUE31_FUZZ_SEED replays a run (the seed is printed);
 * ISSUE31_FUZZ_REQUESTS changes the size (per backend). `npm run bench -- --only fuzz` is the
 * 10,000-request version.
 */
const SEED = Number(process.env['ISSUE31_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const REQUESTS = Number(process.env['ISSUE31_FUZZ_REQUESTS'] ?? 300);
const ALICE_KEY = 'fuzz-alice-key-0123456789';
const BOB_KEY = 'fuzz-bob-key-0123456789ab';
const ADMIN_KEY = 'fuzz-admin-key-0123456789';
const MAX_BODY_BYTES = 256 * 1024;

function summary(report: FuzzReport): string {
  return [
    `seed ${report.seed} (replay: ISSUE31_FUZZ_SEED=${report.seed})`,
    `requests ${report.requests} ${JSON.stringify(report.byClass)}`,
    `>=500 ${report.serverErrors} hangs ${report.hangs} dropped ${report.dropped} field-less 4xx ${report.fieldless} leaks ${report.leaks}`,
    ...report.findings.map(
      (f) =>
        `#${f.index} ${f.kind}${f.leaked ? ` (${f.leaked})` : ''}: ${describeRequest(f.request)}\n  -> ${String(f.answer.status)} ${f.answer.error ?? ''} ${f.answer.text.slice(0, 500)}`,
    ),
  ].join('\n');
}

describe.each(['sqlite', 'postgres'] as const)(
  'issue 31: fuzz of every REST route and tRPC procedure on %s (built server, two tenants)',
  (backend) => {
    // Made in beforeAll: a describe skipped by -t runs no afterAll to remove it.
    let workspace: ReturnType<typeof tempWorkspace>;
    let fake: FakeOpenAIServer;
    let server: ServerProcess;
    let database: ServerDatabase;

    beforeAll(async () => {
      workspace = tempWorkspace('cognition-fuzz-');
      database =
        backend === 'sqlite'
          ? await sqliteServerDatabase('cognition-fuzz-db-')
          : await postgresServerDatabase();
      fake = await FakeOpenAIServer.start({ fallback: { text: 'Fine, thanks.' } });
      server = await startAgentServer(fake, workspace.dir, {
        ...database.env,
        COGNITION_SCOPING_ENABLED: 'true',
        COGNITION_SCOPE_KEYS: 'user',
        COGNITION_API_KEYS: `${ALICE_KEY}:user=alice,${BOB_KEY}:user=bob`,
        COGNITION_ADMIN_API_KEYS: `${ADMIN_KEY}:user=admin`,
        COGNITION_MAX_BODY_BYTES: `${MAX_BODY_BYTES / 1024}kb`,
      });
    });

    afterAll(async () => {
      if (server) expect(await server.stop()).toBe(0);
      await fake?.close();
      await database?.drop();
      workspace?.remove();
    });

    it(`${REQUESTS} hostile requests: no 5xx, no hang, every input error names its field, no leak`, async () => {
      const alice = { Authorization: `Bearer ${ALICE_KEY}` };
      const bob = { Authorization: `Bearer ${BOB_KEY}` };
      const own = await seedTenant(server.url, alice, 'ALICE-OWN-7c1f');
      const other = await seedTenant(server.url, bob, 'BOB-SECRET-d93a');
      const document = (await http(server.url, 'GET', '/openapi.json', { headers: alice })).json;
      const targets = [...restTargets(document), ...trpcTargets()];
      process.stdout.write(
        `issue-31 fuzz (${backend}): seed ${SEED}, ${REQUESTS} requests over ${targets.length} targets\n`,
      );
      const report = await runFuzz({
        baseUrl: server.url,
        document,
        targets,
        seed: SEED,
        requests: REQUESTS,
        timeoutMs: 15_000,
        concurrency: 2,
        own: own.ids,
        foreign: { ...other.ids, agent: [], provider: [] },
        headers: alice,
        secrets: [other.marker],
        maxBodyBytes: MAX_BODY_BYTES,
        maxStringLength: 64 * 1024,
        maxDepth: 3000,
      });
      const text = summary(report);
      const failures = {
        serverErrors: report.serverErrors,
        hangs: report.hangs,
        dropped: report.dropped,
        fieldless: report.fieldless,
        leaks: report.leaks,
      };
      if (Object.values(failures).some((n) => n > 0)) throw new Error(text);
      expect(failures).toEqual({ serverErrors: 0, hangs: 0, dropped: 0, fieldless: 0, leaks: 0 });
      expect(report.requests).toBe(REQUESTS);
      // Both success and refusal paths were reached.
      expect(report.byClass['2xx'] ?? 0).toBeGreaterThan(0);
      expect(report.byClass['4xx'] ?? 0).toBeGreaterThan(0);

      // Healthy afterwards: ready, and a normal turn still works.
      expect((await http(server.url, 'GET', '/ready', { headers: alice })).status).toBe(200);
      const session = await http(server.url, 'POST', '/sessions', { headers: alice, body: {} });
      expect(session.status).toBe(201);
      const turn = await postMessage(
        server.url,
        String(session.json?.['id']),
        { content: 'hi' },
        alice,
      );
      expect(turn.status).toBe(200);
      const sse = await turn.text();
      expect(sse).toContain('Fine, thanks.');
      expect(sse).toContain('event: done');
      // bob's data is intact and still his alone.
      const bobs = await http(server.url, 'GET', `/sessions/${other.ids.session[0]}`, {
        headers: bob,
      });
      expect(bobs.status).toBe(200);
      expect(String(bobs.json?.['title'])).toContain(other.marker);
    }, 600_000);
  },
);
