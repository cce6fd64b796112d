#!/usr/bin/env node
// An OpenAI-compatible model for demos without an API key: it answers every request with the
// user questions it was shown, so a transcript makes visible what the model saw; a question
// quoting a command in backticks makes it call `execute` with that command, and a tool result
// is answered by quoting it. Prints its
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
    const messages = request.body.messages ?? [];
    const last = messages[messages.length - 1];
    // A question quoting a command in backticks asks for it to be run (the execute tool);
    // once a tool answered, the reply quotes what it said.
    const command = last?.role === 'user' ? /`([^`]+)`/.exec(String(last.content))?.[1] : undefined;
    if (command) return { toolCalls: [{ name: 'execute', args: { command } }] };
    if (last?.role === 'tool') return { text: `The tool answered: ${String(last.content).trim()}` };
    const users = messages.filter((m) => m.role === 'user').map((m) => String(m.content));
    return { text: `I was shown ${users.length} question(s): ${users.join(' / ')}` };
  },
});
console.log(fake.baseUrl);
