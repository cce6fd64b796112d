module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'storage-prisma',
  rootDir: __dirname,
  roots: ['<rootDir>/src'],
};
