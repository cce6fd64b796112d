module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'sandbox-local',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
