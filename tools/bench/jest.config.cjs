module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'bench',
  rootDir: __dirname,
  roots: ['<rootDir>'],
  // The smoke spec runs every registered benchmark at --smoke sizes (a built server, Postgres
  // and Docker included).
  testTimeout: 180000,
};
