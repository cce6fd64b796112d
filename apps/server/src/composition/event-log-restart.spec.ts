import { describeRestartReplay } from '../testing/event-log-restart';

// SQLite in `<workspace>/.cognition/state.db`, the default.
describeRestartReplay('SQLite', () =>
  Promise.resolve({ env: {}, cleanup: () => Promise.resolve() }),
);
