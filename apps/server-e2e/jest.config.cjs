module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'server-e2e',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
