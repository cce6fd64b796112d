// The order the spec files start in. Two workers finish together only if the long files start
// first: a 2-minute spec picked up last keeps one worker busy alone for its whole length. Jest
// orders by the durations of the previous run, but only when its cache holds them; a fresh clone
// (CI, `npm test` after a checkout) has none and falls back to file size, which does not predict
// a spec's time (a short file that restarts a server twenty times is among the slowest). So a
// file without a cached time gets its figure from spec-durations.json (measured, seconds), and a
// file in neither gets the median of that table. Files that failed last time still go first.
const { default: Sequencer } = require('@jest/test-sequencer');
const path = require('node:path');
const measured = require('./spec-durations.json');

const figures = Object.values(measured).sort((a, b) => a - b);
const medianMs = (figures[Math.floor(figures.length / 2)] ?? 0) * 1000;

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const estimate = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached;
      const seconds = measured[path.basename(test.path)];
      return seconds != null ? seconds * 1000 : medianMs;
    };
    const keyed = tests.map((test) => ({
      test,
      failed: this.hasFailed(test),
      ms: estimate(test),
    }));
    keyed.sort((a, b) => Number(b.failed) - Number(a.failed) || b.ms - a.ms);
    return keyed.map(({ test }) => test);
  }
}

module.exports = SlowFirstSequencer;
