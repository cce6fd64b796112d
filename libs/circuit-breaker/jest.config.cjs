module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'circuit-breaker',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
