// The LangGraph.js API server (`@langchain/langgraph-api`, what `langgraph dev` serves) in its
// own process: in-memory storage in the working directory, no auth, the graph of
// langgraph-graph.mjs as `agent`, `BENCH_PEER_WORKERS` run workers (the CLI's default
// --n-jobs-per-worker is 10). Prints `listening <url>` once it accepts requests.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '@langchain/langgraph-api/server';

const here = path.dirname(fileURLToPath(import.meta.url));
const { host } = await startServer({
  port: 0,
  nWorkers: Number(process.env.BENCH_PEER_WORKERS ?? 10),
  host: '127.0.0.1',
  cwd: process.cwd(),
  graphs: { agent: `${path.join(here, 'langgraph-graph.mjs')}:graph` },
});
process.stdout.write(`listening http://${host}\n`);
