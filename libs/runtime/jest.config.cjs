module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'runtime',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
