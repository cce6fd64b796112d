// Shared jest configuration: swc transpiles TypeScript (type checking is the typecheck target's
// job), tsconfig paths map to library sources, and ESM-only packages are transpiled too.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias.replace(/[/.]/g, '\\$&')}$`] = path.join(__dirname, target);
}

const esmOnly = ['superjson', 'copy-anything', 'is-what', 'jose'];
// CommonJS packages that load node built-ins with `import()`, which jest's CommonJS module
// system cannot run: transpiled so the dynamic import becomes a require (the OTLP exporter).
const dynamicImports = ['@opentelemetry/otlp-exporter-base'];

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j|mj)sx?$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`node_modules/(?!(${[...esmOnly, ...dynamicImports].join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  moduleNameMapper,
  setupFilesAfterEnv: [path.join(__dirname, 'tools/jest/setup.cjs')],
  testTimeout: 30000,
  // jest's default cache is /tmp/jest_<user>: kept in the repository's ignored node_modules so a
  // run leaves nothing in /tmp (tools/provision/check-clean.mjs checks it).
  cacheDirectory: path.join(__dirname, 'node_modules/.cache/jest'),
};
