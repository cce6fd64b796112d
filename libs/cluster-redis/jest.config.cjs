module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'cluster-redis',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
