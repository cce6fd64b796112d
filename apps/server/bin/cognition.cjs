#!/usr/bin/env node
// The `cognition` command: runs the built CLI bundle (build it with `npm run build`).
const path = require('node:path');
const fs = require('node:fs');

const bundle = path.resolve(__dirname, '../../../dist/apps/server/cli.js');
if (!fs.existsSync(bundle)) {
  process.stderr.write(`cognition: ${bundle} not found; run \`npm run build\` first\n`);
  process.exit(1);
}
require(bundle);
