// Preloaded into a server process by `ab-turn --round-trips` (node --require): counts the
// PostgreSQL round trips of node-postgres (every `Client.query`, which the pool's queries and
// transactions go through) per statement, between two SIGUSR2 signals (the first starts the
// count, the second stops it), and writes them as JSON to COGNITION_BENCH_ROUND_TRIPS_FILE when
// the process exits. Not bundled: it patches the `pg` the server loads from node_modules.
'use strict';
const { writeFileSync } = require('node:fs');
const pg = require('pg');

const file = process.env.COGNITION_BENCH_ROUND_TRIPS_FILE;
const counts = {};
let counting = false;

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, ...rest) {
  if (counting) {
    // A named statement by its name, anything else by the start of its text.
    const text = typeof config === 'string' ? config : (config?.name ?? config?.text ?? '?');
    const label = String(text).replace(/\s+/g, ' ').trim().slice(0, 80);
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return query.call(this, config, ...rest);
};

process.on('SIGUSR2', () => {
  counting = !counting;
});
process.on('exit', () => {
  if (file) writeFileSync(file, JSON.stringify(counts));
});
