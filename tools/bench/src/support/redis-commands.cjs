// Preloaded into a cluster node by `ab-turn --round-trips --cluster` (node --require), beside
// pg-round-trips.cjs: counts the Redis commands of ioredis (every `sendCommand`, which single
// commands, pipelines and the blocking XREAD of the event fan-out all go through) per command
// name, between the same two SIGUSR2 signals, and writes them as JSON to
// COGNITION_BENCH_REDIS_COMMANDS_FILE when the process exits. Not bundled: it patches the
// `ioredis` the server loads from node_modules.
'use strict';
const { writeFileSync } = require('node:fs');
const Redis = require('ioredis');

const file = process.env.COGNITION_BENCH_REDIS_COMMANDS_FILE;
const counts = {};
let counting = false;

const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function countedCommand(command, ...rest) {
  if (counting) {
    const label = String(command?.name ?? '?').toUpperCase();
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return sendCommand.call(this, command, ...rest);
};

process.on('SIGUSR2', () => {
  counting = !counting;
});
process.on('exit', () => {
  if (file) writeFileSync(file, JSON.stringify(counts));
});
