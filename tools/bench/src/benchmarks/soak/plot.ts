import type { ResourceSample, SeriesKey } from './samples';
import { SERIES, shown } from './samples';

const W = 300;
const H = 120;
const PAD = { left: 44, right: 8, top: 18, bottom: 22 };
const COLORS = ['#1f77b4', '#d62728'];

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function tick(value: number): string {
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(1);
}

/** One small chart: each backend's series over minutes, the warm-up shaded. */
function panel(
  key: SeriesKey,
  label: string,
  unit: string,
  lines: { name: string; samples: ResourceSample[] }[],
  warmupMs: number,
): string {
  const all = lines.flatMap((l) => l.samples);
  const maxX = Math.max(1, ...all.map((s) => s.atMs)) / 60_000;
  const ys = all.map((s) => shown(key, s[key]));
  const maxY = Math.max(1e-9, ...ys) * 1.1;
  const x = (ms: number): number => PAD.left + (ms / 60_000 / maxX) * (W - PAD.left - PAD.right);
  const y = (v: number): number => H - PAD.bottom - (v / maxY) * (H - PAD.top - PAD.bottom);
  const paths = lines.map((line, i) => {
    const d = line.samples
      .map(
        (s, j) =>
          `${j === 0 ? 'M' : 'L'}${x(s.atMs).toFixed(1)},${y(shown(key, s[key])).toFixed(1)}`,
      )
      .join(' ');
    return `<path d="${d}" fill="none" stroke="${COLORS[i % COLORS.length] ?? '#000'}" stroke-width="1.5"/>`;
  });
  const title = `${label}${unit ? ` (${unit})` : ''}`;
  return [
    `<rect x="${PAD.left}" y="${PAD.top}" width="${(x(warmupMs) - PAD.left).toFixed(1)}" height="${H - PAD.top - PAD.bottom}" fill="#eee"/>`,
    `<text x="${PAD.left}" y="12" font-size="11">${escape(title)}</text>`,
    `<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#888"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="#888"/>`,
    `<text x="${PAD.left - 4}" y="${PAD.top + 4}" font-size="9" text-anchor="end">${tick(maxY)}</text>`,
    `<text x="${PAD.left - 4}" y="${H - PAD.bottom}" font-size="9" text-anchor="end">0</text>`,
    `<text x="${W - PAD.right}" y="${H - 6}" font-size="9" text-anchor="end">${tick(maxX)} min</text>`,
    ...paths,
  ].join('');
}

/**
 * The soak's report: one small chart per resource (two columns), each with a line per backend;
 * the shaded band is the warm-up, left out of the growth figures.
 */
export function soakSvg(
  lines: { name: string; samples: ResourceSample[] }[],
  warmupMs: number,
): string {
  const cols = 2;
  const rows = Math.ceil(SERIES.length / cols);
  const legendH = 20;
  const panels = SERIES.map((series, i) => {
    const gx = (i % cols) * W;
    const gy = legendH + Math.floor(i / cols) * H;
    return `<g transform="translate(${gx},${gy})">${panel(series.key, series.label, series.unit, lines, warmupMs)}</g>`;
  });
  const legend = lines
    .map(
      (line, i) =>
        `<rect x="${PAD.left + i * 120}" y="6" width="10" height="10" fill="${COLORS[i % COLORS.length] ?? '#000'}"/>` +
        `<text x="${PAD.left + i * 120 + 14}" y="15" font-size="11">${escape(line.name)}</text>`,
    )
    .join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${cols * W}" height="${legendH + rows * H}" ` +
    `font-family="sans-serif">${legend}${panels.join('')}</svg>\n`
  );
}
