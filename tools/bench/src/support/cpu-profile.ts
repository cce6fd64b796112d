import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The parts of a V8 `.cpuprofile` (written by `node --cpu-prof`) this summary reads. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
  }[];
  startTime: number;
  endTime: number;
}

export interface HotSpot {
  /** `function (file:line)`, the file relative to node_modules or the repository when possible. */
  name: string;
  /** Share of all samples spent in the function itself. */
  selfPercent: number;
}

export interface ProfileSummary {
  file: string;
  durationMs: number;
  /** Share of samples in V8's idle node (waiting for I/O). */
  idlePercent: number;
  hotSpots: HotSpot[];
  /** Self time per package (`node_modules/<pkg>`, `node:internal`, `(app)`, `(gc)` ...). */
  byPackage: HotSpot[];
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) return url.slice(nm + 'node_modules/'.length);
  return url.replace(/^file:\/\//, '').replace(/^.*\/(dist|libs|apps|tools)\//, '$1/');
}

function packageOf(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return '(gc)';
  if (functionName === '(program)') return '(program)';
  if (url === '') return '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const nm = url.lastIndexOf('node_modules/');
  if (nm === -1) return '(app)';
  const rest = url.slice(nm + 'node_modules/'.length).split('/');
  return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? '(unknown)');
}

/** Self-time hot spots of one profile (idle time excluded from the shares). */
function summarizeProfile(file: string, top = 12): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let idle = 0;
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += hits;
      continue;
    }
    const name = `${functionName || '(anonymous)'} (${shortUrl(url) || 'native'}:${lineNumber + 1})`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
    const pkg = packageOf(url, functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
  }
  const busy = Math.max(1, total - idle);
  const ranked = (map: Map<string, number>): HotSpot[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, hits]) => ({ name, selfPercent: (hits * 100) / busy }));
  return {
    file,
    durationMs: (profile.endTime - profile.startTime) / 1000,
    idlePercent: total === 0 ? 0 : (idle * 100) / total,
    hotSpots: ranked(byFunction),
    byPackage: ranked(byPackage),
  };
}

/** Every `.cpuprofile` in `dir`, summarized. */
export function summarizeProfiles(dir: string, top = 12): ProfileSummary[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort()
    .map((name) => summarizeProfile(path.join(dir, name), top));
}

export function formatProfileSummary(summary: ProfileSummary): string {
  const lines = [
    `${path.basename(summary.file)}: ${(summary.durationMs / 1000).toFixed(1)} s, ${summary.idlePercent.toFixed(0)}% idle; self time of the busy part:`,
    '  by package: ' +
      summary.byPackage.map((p) => `${p.name} ${p.selfPercent.toFixed(1)}%`).join(', '),
    ...summary.hotSpots.map((h) => `  ${h.selfPercent.toFixed(1).padStart(5)}%  ${h.name}`),
  ];
  return lines.join('\n');
}
