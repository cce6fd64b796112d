module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'sandbox-docker',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
