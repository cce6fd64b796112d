#!/usr/bin/env node
// An OpenAI-compatible model for demos without an API key: it answers every request with the
// user questions it was shown, so a transcript makes visible what the model saw. Prints its
// base URL (for COGNITION_OPENAI_COMPATIBLE_BASE_URL) and serves until killed.
//   node tools/demo/fake-provider.mjs
import { build } from 'esbuild';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const out = join(mkdtempSync(join(tmpdir(), 'cognition-fake-')), 'fake.mjs');
await build({
  entryPoints: [join(root, 'libs/runtime/src/testing/fake-openai-server.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  outfile: out,
  logLevel: 'warning',
});
const { FakeOpenAIServer } = await import(pathToFileURL(out).href);
const fake = await FakeOpenAIServer.start({
  fallback: (request) => {
    const users = (request.body.messages ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => String(m.content));
    return { text: `I was shown ${users.length} question(s): ${users.join(' / ')}` };
  },
});
console.log(fake.baseUrl);
