import { describeRestartReplay } from './event-log-restart-case';

// SQLite in `<workspace>/.cognition/state.db`, the default.
describeRestartReplay('SQLite', () =>
  Promise.resolve({ env: {}, cleanup: () => Promise.resolve() }),
);
