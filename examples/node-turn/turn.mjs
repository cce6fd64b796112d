// One streamed turn with @cognition/client: creates a session, sends one message and prints the
// answer as it streams (tool calls and their results on lines of their own).
//
//   COGNITION_URL=http://127.0.0.1:8000 node turn.mjs "What is in this folder?"
//
// COGNITION_API_KEY is sent as the bearer token when the server has API keys configured.
import { createCognitionClient, streamMessage } from '@cognition/client';

const baseUrl = (process.env.COGNITION_URL ?? 'http://127.0.0.1:8000').replace(/\/+$/, '');
const content = process.argv.slice(2).join(' ') || 'Hello! What can you do?';

const cognition = createCognitionClient({
  url: `${baseUrl}/trpc`,
  apiKey: process.env.COGNITION_API_KEY || undefined,
});

const session = await cognition.sessions.create.mutate({ title: 'node-turn example' });
console.log(`session ${session.id}`);
console.log(`> ${content}`);

let outcome = 'the stream ended without a terminal event';
for await (const { event } of streamMessage(cognition, { sessionId: session.id, content })) {
  switch (event.type) {
    case 'token':
      process.stdout.write(event.content);
      break;
    case 'tool_call':
      process.stdout.write(`\n[tool ${event.name}] ${JSON.stringify(event.args)}\n`);
      break;
    case 'tool_result':
      process.stdout.write(`[exit ${event.exit_code}] ${event.output.slice(0, 200)}\n`);
      break;
    case 'usage':
      outcome = `${event.model}: ${event.input_tokens} tokens in, ${event.output_tokens} out`;
      break;
    case 'interrupt':
      // Human in the loop: the run waits for a decision (runs.resume); see docs/runs.md.
      outcome = `paused for approval of ${event.tool_calls.length} tool call(s)`;
      break;
    case 'error':
      process.exitCode = 1;
      outcome = `error ${event.code}: ${event.message}`;
      break;
    case 'done':
      outcome = `done (${outcome})`;
      break;
    default:
      break;
  }
}
process.stdout.write('\n');
console.log(outcome);
