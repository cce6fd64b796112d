#!/usr/bin/env node
// Writes prisma/<provider>/schema.prisma from the one model source (prisma/model.prisma).
// `--check` writes nothing and exits 1 when a generated schema is out of date.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const models = readFileSync(join(root, 'prisma', 'model.prisma'), 'utf8');

const PROVIDERS = {
  sqlite: { url: 'file:./dev.db' },
  postgres: { provider: 'postgresql', url: 'postgresql://postgres@127.0.0.1:5432/postgres' },
};

function composeSchema(name) {
  const { provider = name, url } = PROVIDERS[name];
  return `// GENERATED from prisma/model.prisma by tools/prisma/compose-schema.mjs. Do not edit.

generator client {
  provider     = "prisma-client"
  output       = "../../libs/storage-prisma/src/generated/${name}"
  engineType   = "client"
  moduleFormat = "cjs"
}

datasource db {
  provider = "${provider}"
  // Only the CLI reads this; the server connects through a driver adapter with its own URL.
  url      = "${url}"
}

${models}`;
}

const check = process.argv.includes('--check');
let stale = [];
for (const name of Object.keys(PROVIDERS)) {
  const file = join(root, 'prisma', name, 'schema.prisma');
  const want = composeSchema(name);
  const have = existsSync(file) ? readFileSync(file, 'utf8') : null;
  if (have === want) continue;
  if (check) stale.push(file);
  else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, want);
  }
}
if (stale.length > 0) {
  console.error(
    `Out of date with prisma/model.prisma: ${stale.join(', ')}. Run: npm run prisma:generate`,
  );
  process.exit(1);
}
