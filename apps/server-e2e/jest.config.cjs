const preset = require('../../jest.preset.cjs');

// The official LangGraph SDK (issue 28's specs) ships CommonJS that requires ESM-only packages,
// which jest's CommonJS module system on Node 20 cannot load: they are transpiled too. The
// SDK's own folder is listed so its nested copies (p-queue, p-timeout) are reached.
const langgraphSdkEsm = [
  '@langchain/langgraph-sdk',
  'p-retry',
  'is-network-error',
  'uuid',
  'p-queue',
  'p-timeout',
];
const [presetIgnore] = preset.transformIgnorePatterns;

module.exports = {
  ...preset,
  displayName: 'server-e2e',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
  // Builds dist/apps/server once per run; every spec spawns that bundle.
  globalSetup: '<rootDir>/src/testing/global-setup.ts',
  // The longest spec files start first, also in a fresh clone (test-sequencer.cjs).
  testSequencer: '<rootDir>/test-sequencer.cjs',
  // A failing test prints the logs of the server processes it ran against (README.md).
  testEnvironment: '<rootDir>/src/testing/environment.ts',
  setupFilesAfterEnv: [
    ...preset.setupFilesAfterEnv,
    '<rootDir>/src/testing/print-logs-on-failure.ts',
  ],
  testTimeout: 60000,
  // Two spec files at a time: most of a spec's time is spent waiting on the servers it started
  // (restarts, lease expiries, streamed turns), and jest's default on a 2-core machine is one
  // worker. Every spec owns its ports, databases, Redis key prefix and workspace.
  maxWorkers: 2,
  transformIgnorePatterns: [presetIgnore.replace('(?!(', `(?!(${langgraphSdkEsm.join('|')}|`)],
};
