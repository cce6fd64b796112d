// The floors of benchmarks 2 and 4 (tools/bench/src/support/sse-floor.ts starts them): a bare
// `node:http` server. Benchmark 2: every request gets the event stream a Cognition run of N tokens
// sends — `retry:`, N `token` events, a `done` event carrying the whole text — built and written
// one `res.write` per event, as the server does, with the same `id:`/`event:`/`data:` shape and
// the same backpressure rule. Benchmark 4 (idle): every request gets `retry:` and one `status`
// event, then only `: ping` heartbeats until the client goes. Nothing else: no framework, no run,
// no event log. Plain JavaScript in its own process, so it runs the same from the esbuild bundle
// and from Jest.
//
// Environment: SSE_FLOOR_TOKENS (N), SSE_FLOOR_WORDS (JSON array; token i is words[i % length]);
// or SSE_FLOOR_IDLE_HEARTBEAT_MS (the idle mode, with that heartbeat interval).
// Prints `listening <port>` on stdout once it accepts connections.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';

const idleHeartbeatMs = Number(process.env.SSE_FLOOR_IDLE_HEARTBEAT_MS ?? 0);
const count = Number(process.env.SSE_FLOOR_TOKENS);
const words = JSON.parse(process.env.SSE_FLOOR_WORDS ?? '[]');
if (
  idleHeartbeatMs <= 0 &&
  (!Number.isInteger(count) || count < 1 || !Array.isArray(words) || words.length === 0)
) {
  throw new Error(
    'SSE_FLOOR_TOKENS (integer >= 1) and SSE_FLOOR_WORDS (non-empty JSON array), or SSE_FLOOR_IDLE_HEARTBEAT_MS (> 0), are required',
  );
}

// The width of the server's run ids (`run_` + 10 + 4 + 10 characters) and event sequence numbers.
const runId = () =>
  `run_${Date.now().toString(36).padStart(10, '0')}0000${randomBytes(5).toString('hex')}`;
const eventId = (run, seq) => `${run}:${String(seq).padStart(9, '0')}`;
const frame = (id, type, data) => `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

async function send(req, res) {
  // The request body is read and dropped, as the server parses the message it is sent.
  for await (const _chunk of req);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  res.write('retry: 3000\n\n');
  const run = runId();
  let text = '';
  for (let i = 0; i < count; i += 1) {
    const content = words[i % words.length];
    text += content;
    if (!res.write(frame(eventId(run, i + 1), 'token', { content }))) {
      await Promise.race([once(res, 'drain'), once(res, 'close')]);
      if (res.destroyed) return;
    }
  }
  res.end(frame(eventId(run, count + 1), 'done', { assistant_data: { content: text } }));
}

/** Benchmark 4: the first event a follower of a waiting run gets, then heartbeats only. */
function hold(req, res) {
  req.resume();
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  res.write(`retry: 3000\n\n${frame(eventId(runId(), 1), 'status', { status: 'thinking' })}`);
  const heartbeat = setInterval(() => res.write(': ping\n\n'), idleHeartbeatMs);
  res.once('close', () => clearInterval(heartbeat));
}

const server = createServer((req, res) => {
  if (idleHeartbeatMs > 0) {
    hold(req, res);
    return;
  }
  send(req, res).catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    res.destroy();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
