// The reference of benchmark 2's server-CPU goal: LangChain's ChatOpenAI alone, streaming an
// answer from the fake OpenAI-compatible server, in its own process so its CPU time can be read
// from /proc like a server's. Protocol on stdin/stdout, one line each: it prints `ready` after a
// warm-up stream; every `go` line streams once and answers `done <chunks>`; stdin closing ends it.
import readline from 'node:readline';
import { ChatOpenAI } from '@langchain/openai';

const baseURL = process.env.BENCH_MODEL_URL;
if (!baseURL) throw new Error('BENCH_MODEL_URL must be set');
const model = new ChatOpenAI({
  model: process.env.BENCH_MODEL ?? 'bench-model',
  apiKey: 'bench',
  streaming: true,
  configuration: { baseURL },
});

async function streamOnce() {
  let chunks = 0;
  for await (const chunk of await model.stream('Write a very long answer.')) {
    if (typeof chunk.content === 'string' && chunk.content !== '') chunks += 1;
  }
  return chunks;
}

await streamOnce();
process.stdout.write('ready\n');
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line === 'go') process.stdout.write(`done ${await streamOnce()}\n`);
}
