import { metricValue, trendGrowth } from './samples';

const PAGE = [
  '# HELP process_open_fds Number of open file descriptors.',
  '# TYPE process_open_fds gauge',
  'process_open_fds 31',
  'process_open_fds_max 1024',
  'nodejs_active_resources{type="TCPSocketWrap"} 4',
  'nodejs_active_resources{type="Timeout"} 7',
  'nodejs_active_resources_total 11',
].join('\n');

describe('metricValue', () => {
  it('reads a metric by its exact name, and a labelled series', () => {
    expect(metricValue(PAGE, 'process_open_fds')).toBe(31);
    expect(metricValue(PAGE, 'nodejs_active_resources', 'type="Timeout"')).toBe(7);
    expect(metricValue(PAGE, 'nodejs_active_resources')).toBe(11);
  });

  it('counts an absent label set of a present metric as 0, and refuses a missing metric', () => {
    expect(metricValue(PAGE, 'nodejs_active_resources', 'type="Immediate"')).toBe(0);
    expect(() => metricValue(PAGE, 'process_resident_memory_bytes')).toThrow(
      'the metrics page has no process_resident_memory_bytes',
    );
  });
});

describe('trendGrowth', () => {
  it('is the fitted line’s growth over the window, not the end points’', () => {
    const flat = [100, 130, 70, 100, 100].map((y, x) => ({ x, y }));
    // End points equal; the fit (106 → 94) sees the early spike.
    expect(trendGrowth(flat)).toBeCloseTo(-12 / 106, 5);
    const leak = [100, 105, 110, 115, 120].map((y, x) => ({ x, y }));
    expect(trendGrowth(leak)).toBeCloseTo(0.2, 5);
  });

  it('gives the fitted end for a series that starts at 0, and 0 without two points', () => {
    expect(trendGrowth([0, 1, 2].map((y, x) => ({ x, y })))).toBeCloseTo(2, 5);
    expect(trendGrowth([{ x: 0, y: 5 }])).toBe(0);
  });
});
