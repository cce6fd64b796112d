const preset = require('../../jest.preset.cjs');

// ESM-only packages the peers' clients load with require() (jest's CommonJS runtime cannot run
// them untranspiled; Node 20's require(esm) can, so the bench itself needs no such step).
const peerEsmOnly = ['jose'];

module.exports = {
  ...preset,
  transformIgnorePatterns: [
    ...preset.transformIgnorePatterns.map((pattern) =>
      pattern.replace('node_modules/(?!(', `node_modules/(?!(${peerEsmOnly.join('|')}|`),
    ),
  ],
  displayName: 'bench',
  rootDir: __dirname,
  roots: ['<rootDir>'],
  // The smoke spec runs every registered benchmark at --smoke sizes (a built server, Postgres
  // and Docker included).
  testTimeout: 180000,
};
