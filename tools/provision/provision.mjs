#!/usr/bin/env node
// `npm test`'s pretest step: brings up every service the test suite uses, one ensure script per
// service (contract in README.md), in order. Each prints one line when the service is there and
// returns at once; a service that cannot be provided fails with its own message, and the suite
// does not start (one clear message instead of dozens of failed tests).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// A service a new issue adds (Redis, a load balancer) gets its ensure script here.
const SERVICES = [
  { name: 'postgres', command: process.execPath, args: [path.join(here, 'ensure-postgres.mjs')] },
  { name: 'docker', command: 'bash', args: [path.join(here, 'ensure-docker.sh')] },
  { name: 'chromium', command: 'bash', args: [path.join(here, 'ensure-chromium.sh')] },
  { name: 'redis', command: 'bash', args: [path.join(here, 'ensure-redis.sh')] },
  { name: 'haproxy', command: 'bash', args: [path.join(here, 'ensure-haproxy.sh')] },
];

const started = Date.now();
const failed = [];
for (const service of SERVICES) {
  const result = spawnSync(service.command, service.args, { stdio: 'inherit' });
  if (result.status !== 0) failed.push(service.name);
}
if (failed.length > 0) {
  process.stderr.write(
    `provision: the test suite needs ${failed.join(', ')} (see the message above); not running it.\n` +
      'See tools/provision/README.md for the variables that point the suite at existing services.\n',
  );
  process.exit(1);
}
process.stdout.write(`provision: every service is ready (${Date.now() - started} ms)\n`);
