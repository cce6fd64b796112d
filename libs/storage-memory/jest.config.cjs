module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'storage-memory',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
