/** One reading of a server's resources. */
export interface ResourceSample {
  /** ms since the load started. */
  atMs: number;
  rssBytes: number;
  /**
   * The V8 heap used right after a full GC, at the quiesced instant (see `activeTimers`): what
   * the process retains. Read under load (`nodejs_heap_size_used_bytes`) it is mostly garbage
   * waiting for the next major GC, and its trend follows where the readings fall in the GC
   * cycle (`heap-probe.cjs`).
   */
  heapAfterGcBytes: number;
  openFds: number;
  /** PostgreSQL: the server's backends in pg_stat_activity; SQLite: open handles on the file. */
  dbConnections: number;
  /** p99 of the event loop's delay since the previous reading (prom-client resets it). */
  loopDelayP99Ms: number;
  /**
   * Active (ref'ed) `setTimeout`/`setInterval` timers (`process.getActiveResourcesInfo`),
   * counted at a quiesced instant: the load held, nothing in flight, past the pool's idle
   * timeout. Under load the count is the work in flight (a heartbeat per open stream, an idle
   * timer per pooled connection), not what leaks.
   */
  activeTimers: number;
}

export type SeriesKey = Exclude<keyof ResourceSample, 'atMs'>;

export const SERIES: readonly { key: SeriesKey; label: string; unit: string }[] = [
  { key: 'rssBytes', label: 'RSS', unit: 'MiB' },
  { key: 'heapAfterGcBytes', label: 'V8 heap after GC (quiesced)', unit: 'MiB' },
  { key: 'openFds', label: 'open file descriptors', unit: '' },
  { key: 'dbConnections', label: 'database connections', unit: '' },
  { key: 'loopDelayP99Ms', label: 'event-loop delay p99', unit: 'ms' },
  { key: 'activeTimers', label: 'active timers (quiesced)', unit: '' },
];

/** A sample's value in the unit it is shown in. */
export function shown(key: SeriesKey, value: number): number {
  return key === 'rssBytes' || key === 'heapAfterGcBytes' ? value / 1024 / 1024 : value;
}

/**
 * The value of `name` (summed over label sets matching `labels`) in a Prometheus text page. A
 * labelled series that is absent while the metric exists is 0 (prom-client lists only the
 * resource types that are active).
 */
export function metricValue(page: string, name: string, labels = ''): number {
  let total = 0;
  let found = false;
  for (const line of page.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (labels !== '' && !rest.includes(labels)) {
      found = true;
      continue;
    }
    const value = Number(rest.slice(rest.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) {
      total += value;
      found = true;
    }
  }
  if (!found) throw new Error(`the metrics page has no ${name}${labels ? ` {${labels}}` : ''}`);
  return total;
}

/**
 * Growth of a series over the measured window, from its least-squares line: (fitted end −
 * fitted start) / fitted start. A trend, not two noisy end points: a leak shows as a slope,
 * a spike does not. A series that starts at 0 grows by its fitted end (in its own units).
 */
export function trendGrowth(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const slope = sxx === 0 ? 0 : points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx;
  const first = points[0]?.x ?? 0;
  const last = points[n - 1]?.x ?? 0;
  const start = my + slope * (first - mx);
  const end = my + slope * (last - mx);
  if (start <= 0) return end - start;
  return (end - start) / start;
}
