module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'server-e2e',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
  // Builds dist/apps/server once per run; every spec spawns that bundle.
  globalSetup: '<rootDir>/src/support/global-setup.ts',
  testTimeout: 60000,
};
