// Writes spec-durations.json (what test-sequencer.cjs orders a fresh clone's run by) from the
// report of a whole run of the suite:
//   npx jest -c apps/server-e2e/jest.config.cjs --json --outputFile=<report.json>
//   node apps/server-e2e/record-durations.mjs <report.json>
// Every file of the report gets its measured seconds; files the report lacks keep their figure
// (unless they no longer exist).
// Only the order matters, so a run on a busy machine serves as well as a quiet one.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [reportFile] = process.argv.slice(2);
if (!reportFile) {
  process.stderr.write('usage: node apps/server-e2e/record-durations.mjs <jest --json report>\n');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const table = path.join(here, 'spec-durations.json');
const figures = JSON.parse(readFileSync(table, 'utf8'));
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
for (const result of report.testResults) {
  const seconds = (result.endTime - result.startTime) / 1000;
  figures[path.basename(result.name)] = Math.round(seconds);
}
const sorted = Object.fromEntries(
  Object.entries(figures)
    .filter(([file]) => existsSync(path.join(here, 'src', file)))
    .sort(([, a], [, b]) => b - a),
);
writeFileSync(table, `${JSON.stringify(sorted, null, 2)}\n`);
process.stdout.write(`${Object.keys(sorted).length} spec files -> ${path.relative('.', table)}\n`);
