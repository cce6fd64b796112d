import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeExecutionBackendFactory } from '@cognition/runtime/testing';
import pino from 'pino';
import { runCli } from '../cli/commands';
import { loadConfig } from '../config';
import type { RunningServer } from '../composition/server';
import { startServer } from '../composition/server';

/** The secrets a test writes; none may appear in an answer or in the database's bytes. */
export const SECRETS = [
  'sk-provider-do-not-leak-31',
  'env-do-not-leak-31',
  'Bearer hdr-do-not-leak-31',
];
/** A value written beside them in clear: proves the raw read would see plaintext. */
export const CONTROL = 'vllm-control-host.internal';

export const PROVIDER = {
  id: 'vllm',
  kind: 'openai_compatible',
  model: 'llama-31',
  base_url: `http://${CONTROL}:8000/v1`,
  api_key: SECRETS[0],
};
export const AGENT = {
  name: 'tooled',
  description: 'Uses MCP',
  system_prompt: 'One.',
  mcp_servers: [
    { name: 'notes', command: 'node', args: ['s.js'], env: { NOTES_TOKEN: SECRETS[1] } },
    { name: 'search', url: 'https://mcp.example.com/mcp', headers: { Authorization: SECRETS[2] } },
  ],
};

export const newKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

/** A server on `env` (plus a temp workspace) whose log lines are kept; printed when a test fails. */
export class SecretsServerHarness {
  readonly workspace = mkdtempSync(path.join(os.tmpdir(), 'cognition-secrets-'));
  readonly logs: string[] = [];
  private running: RunningServer | undefined;

  constructor(private readonly baseEnv: Record<string, string>) {}

  async start(env: Record<string, string> = {}): Promise<RunningServer> {
    const logger = pino({ level: 'debug' }, { write: (line: string) => void this.logs.push(line) });
    this.running = await startServer(
      loadConfig({ COGNITION_PORT: '0', ...this.baseEnv, ...env }, this.workspace),
      { logger, sandbox: new FakeExecutionBackendFactory() },
    );
    return this.running;
  }

  async stop(): Promise<void> {
    await this.running?.shutdown();
    this.running = undefined;
  }

  async request(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; text: string }> {
    if (!this.running) throw new Error('not started');
    const response = await fetch(`${this.running.url}${route}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, text: await response.text() };
  }

  /** `cognition secrets rotate` in this process, on the same database. */
  async rotate(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
    let out = '';
    const code = await runCli(['secrets', 'rotate'], {
      env: {
        ...this.baseEnv,
        COGNITION_WORKSPACE_ROOT: this.workspace,
        COGNITION_LOG_LEVEL: 'error',
        ...env,
      },
      stdout: (text) => void (out += text),
      stderr: (text) => void (out += text),
      onSignal: () => undefined,
      exit: () => undefined,
    });
    return { code, out };
  }

  async cleanup(failed: boolean): Promise<void> {
    await this.stop();
    // The server's own log explains a failure (rules: tests print the logs of what they started).
    if (failed) process.stderr.write(`server log:\n${this.logs.join('')}\n`);
    rmSync(this.workspace, { recursive: true, force: true });
  }
}

/**
 * The cases every database backend must pass (issue 31): `readRaw` returns everything the
 * database holds of the registry, read around the server (file bytes, or rows through `pg`).
 */
export function describeSecretsAtRest(
  name: string,
  setup: () => Promise<{
    env: Record<string, string>;
    readRaw(): Promise<string>;
    cleanup(): Promise<void>;
  }>,
): void {
  describe(`secrets at rest on ${name} (issue 31)`, () => {
    let db: Awaited<ReturnType<typeof setup>>;
    let harness: SecretsServerHarness;
    beforeEach(async () => {
      db = await setup();
      harness = new SecretsServerHarness(db.env);
    });
    afterEach(async () => {
      await harness.cleanup(false);
      await db.cleanup();
    });

    it('stores no plaintext secret and answers none; rotation re-encrypts under the new key', async () => {
      const k1 = newKey('k1');
      await harness.start({ COGNITION_SECRETS_KEY: k1 });
      try {
        const answers = [
          await harness.request('POST', '/providers', PROVIDER),
          await harness.request('POST', '/agents', AGENT),
          await harness.request('GET', '/agents/tooled'),
          await harness.request('GET', '/agents'),
          await harness.request('GET', '/providers'),
        ];
        expect(answers.map((a) => a.status)).toEqual([201, 201, 200, 200, 200]);
        const all = answers.map((a) => a.text).join('\n');
        for (const secret of SECRETS) expect(all).not.toContain(secret);
        expect(JSON.parse(answers[2]?.text ?? '{}')).toMatchObject({
          mcp_servers: [
            { name: 'notes', env_set: true, env_names: ['NOTES_TOKEN'] },
            { name: 'search', headers_set: true, header_names: ['Authorization'] },
          ],
        });
        await harness.stop();

        const raw = await db.readRaw();
        expect(raw).toContain(CONTROL);
        expect(raw).toContain('enc:v1:k1:');
        for (const secret of SECRETS) expect(raw).not.toContain(secret);

        const k2 = newKey('k2');
        const rotated = await harness.rotate({
          COGNITION_SECRETS_KEY: k2,
          COGNITION_SECRETS_OLD_KEYS: k1,
        });
        expect(rotated.out).toContain('2 entries re-encrypted');
        expect(rotated.code).toBe(0);
        const after = await db.readRaw();
        expect(after).toContain('enc:v1:k2:');
        expect(after).not.toContain('enc:v1:k1:');
        for (const secret of SECRETS) expect(after).not.toContain(secret);

        // The old key retired: everything still reads under the new one alone.
        await harness.start({ COGNITION_SECRETS_KEY: k2 });
        const provider = await harness.request('GET', '/providers/vllm');
        expect(JSON.parse(provider.text)).toMatchObject({ api_key_set: true });
        expect((await harness.request('GET', '/agents/tooled')).status).toBe(200);
      } catch (error) {
        await harness.cleanup(true);
        throw error;
      }
    });

    it('refuses to store a secret in production without a key (503 naming the setting)', async () => {
      await harness.start({ NODE_ENV: 'production' });
      try {
        const refused = await harness.request('POST', '/providers', PROVIDER);
        expect(refused.status).toBe(503);
        expect(refused.text).toContain('COGNITION_SECRETS_KEY');
        const { api_key: _key, ...keyless } = PROVIDER;
        expect((await harness.request('POST', '/providers', keyless)).status).toBe(201);
        expect(harness.logs.join('')).toContain('no COGNITION_SECRETS_KEY in production');
      } catch (error) {
        await harness.cleanup(true);
        throw error;
      }
    });
  });
}
