module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'provision',
  rootDir: __dirname,
  roots: ['<rootDir>'],
  // Starting an embedded PostgreSQL (initdb on first use) takes a few seconds on 2 cores.
  testTimeout: 120000,
};
