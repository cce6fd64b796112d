#!/usr/bin/env node
// An OpenAI-compatible model for demos without an API key: it answers every request with the
// user questions it was shown, so a transcript makes visible what the model saw; a question
// quoting a command in backticks makes it call `execute` with that command, a question saying
// "call <tool>" of a tool the request offers (an AG-UI frontend tool) calls that tool with no
// arguments, and a tool result is answered by quoting it. Prints its base URL (for COGNITION_OPENAI_COMPATIBLE_BASE_URL) and
// serves until killed.
//   node tools/demo/fake-provider.mjs
// Slow and long answers (e.g. to kill the server mid-stream, docs/runs.md):
//   FAKE_PROVIDER_DELAY_MS=250   wait this long before each streamed chunk (one word each)
//   FAKE_PROVIDER_TEXT='...'     answer plain questions with this text instead
//   FAKE_PROVIDER_TOKENS=2000    make plain answers at least this many words (the text repeated)
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The text between the first pair of backticks. Written as \x60 so that the backticks inside the
// regular expression are not read as an unclosed template literal by tools that do not parse
// regular expressions (editors' bracket matching, structure outlines).
const QUOTED_COMMAND = /\x60([^\x60]+)\x60/;

/** A non-negative integer setting, or exit naming it. */
function intSetting(name) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,9}$/.test(raw)) {
    console.error(`${name}: expected a non-negative integer, got "${raw}"`);
    process.exit(2);
  }
  return Number(raw);
}
const delayMs = intSetting('FAKE_PROVIDER_DELAY_MS');
const minWords = intSetting('FAKE_PROVIDER_TOKENS');
const fixedText = process.env.FAKE_PROVIDER_TEXT || undefined;

/** `text` as chunks of one word each, repeated until there are at least `minWords`. */
function longAnswer(text) {
  const words = text.match(/\S+\s*/g) ?? [text];
  const chunks = [...words];
  for (let i = 0; chunks.length < minWords; i += 1) {
    const word = words[i % words.length];
    chunks.push(i % words.length === 0 ? ` ${word}` : word);
  }
  return chunks;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const outDir = mkdtempSync(join(tmpdir(), 'cognition-fake-'));
const out = join(outDir, 'fake.mjs');
await build({
  entryPoints: [join(root, 'libs/runtime/src/testing/fake-openai-server.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  outfile: out,
  logLevel: 'warning',
});
const { FakeOpenAIServer } = await import(pathToFileURL(out).href);
// Loaded: the bundle is not needed any more (nothing is left in the temp folder).
rmSync(outDir, { recursive: true, force: true });
const fake = await FakeOpenAIServer.start({
  chunkDelayMs: delayMs,
  fallback: (request) => {
    const messages = request.body.messages ?? [];
    const last = messages[messages.length - 1];
    // A question quoting a command in backticks asks for it to be run (the execute tool);
    // once a tool answered, the reply quotes what it said.
    const command =
      last?.role === 'user' ? QUOTED_COMMAND.exec(String(last.content))?.[1] : undefined;
    if (command) return { toolCalls: [{ name: 'execute', args: { command } }] };
    const named =
      last?.role === 'user' ? /\bcall (\w+)/.exec(String(last.content))?.[1] : undefined;
    if (named && (request.body.tools ?? []).some((t) => t.function.name === named)) {
      return { toolCalls: [{ name: named, args: {} }] };
    }
    if (last?.role === 'tool') return { text: `The tool answered: ${String(last.content).trim()}` };
    const users = messages.filter((m) => m.role === 'user').map((m) => String(m.content));
    const text = fixedText ?? `I was shown ${users.length} question(s): ${users.join(' / ')}`;
    return { text: longAnswer(text) };
  },
});
console.log(fake.baseUrl);
