// @ts-check
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

const TS_FILES = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];
const SCRIPT_FILES = ['**/*.js', '**/*.mjs', '**/*.cjs'];

const ALL_LAYERS = [
  'layer:contracts',
  'layer:util',
  'layer:port',
  'layer:impl',
  'layer:runtime',
  'layer:cluster',
  'layer:api',
  'layer:client',
  'layer:app',
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules',
      '**/dist',
      '**/coverage',
      '**/tmp',
      '**/src/generated/**',
      'prisma/**',
      '.nx/**',
      // Standalone TypeScript projects with their own dependencies (installed only in their
      // folders); the examples spec of server-e2e type-checks and runs them against the packed
      // client. Their scripts (.mjs) get the script rules below like every other script.
      'examples/**/*.ts',
      'examples/**/*.tsx',
    ],
  },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  { files: TS_FILES, extends: [...tseslint.configs.recommendedTypeChecked] },
  {
    // The scripts (build, start, provisioning, schema composition, jest configs, demo and bench
    // helpers) are plain JavaScript that Node runs as is. They get the syntax-level rules only:
    // type-aware rules need every file in a TypeScript program, and these files carry no types
    // (no JSDoc, no checkJs), so those rules would see `any` everywhere and report noise, not bugs.
    // What the type-aware rules guard in TypeScript, `no-undef` and `no-unused-vars` catch here.
    files: SCRIPT_FILES,
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: globals.node },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },
  // Loaded by jest (setupFilesAfterEnv), where `expect` is a global.
  { files: ['tools/jest/setup.cjs'], languageOptions: { globals: globals.jest } },
  {
    files: TS_FILES,
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'error',
      // The layering of ARCHITECTURE.md, enforced: who may import whom, and which libraries may
      // touch which infrastructure packages.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'layer:contracts', onlyDependOnLibsWithTags: ['layer:contracts'] },
            { sourceTag: 'layer:util', onlyDependOnLibsWithTags: ['layer:contracts'] },
            {
              sourceTag: 'layer:port',
              onlyDependOnLibsWithTags: ['layer:contracts', 'layer:util'],
            },
            {
              sourceTag: 'layer:impl',
              onlyDependOnLibsWithTags: ['layer:port', 'layer:contracts', 'layer:util'],
            },
            {
              sourceTag: 'layer:runtime',
              onlyDependOnLibsWithTags: ['layer:port', 'layer:contracts', 'layer:util'],
            },
            {
              sourceTag: 'layer:cluster',
              onlyDependOnLibsWithTags: ['layer:runtime', 'layer:contracts', 'layer:util'],
            },
            {
              sourceTag: 'layer:api',
              onlyDependOnLibsWithTags: [
                'layer:runtime',
                'layer:port',
                'layer:contracts',
                'layer:util',
              ],
            },
            // client -> api is for types only; the no-restricted-imports rule below forbids values.
            {
              sourceTag: 'layer:client',
              onlyDependOnLibsWithTags: ['layer:contracts', 'layer:api'],
            },
            { sourceTag: 'layer:app', onlyDependOnLibsWithTags: ALL_LAYERS },
            {
              sourceTag: '/^name:(?!storage-prisma$).*$/',
              bannedExternalImports: ['@prisma/*', 'prisma'],
            },
            // The database drivers too; the benchmark also opens them for the official savers
            // it compares ours with.
            {
              sourceTag: '/^name:(?!(storage-prisma|bench)$).*$/',
              bannedExternalImports: ['better-sqlite3', 'pg'],
            },
            { sourceTag: '/^name:(?!sandbox-docker$).*$/', bannedExternalImports: ['dockerode'] },
            {
              sourceTag: '/^name:(?!(api|server)$).*$/',
              bannedExternalImports: ['@trpc/server', '@trpc/server/*'],
            },
            { sourceTag: '/^name:(?!server$).*$/', bannedExternalImports: ['express'] },
            { sourceTag: '/^name:(?!cluster-redis$).*$/', bannedExternalImports: ['ioredis'] },
            // The MCP client lives in the runtime (its tools are runtime tools); the MCP server
            // that offers our agents is an HTTP endpoint of the server (http/protocols/mcp).
            {
              sourceTag: '/^name:(?!(runtime|server)$).*$/',
              bannedExternalImports: ['@modelcontextprotocol/*'],
            },
            // Libraries instrument through @opentelemetry/api (a no-op without an SDK) and hooks;
            // only the server picks the SDK, the exporter and the Prometheus client.
            {
              sourceTag: '/^name:(?!server$).*$/',
              bannedExternalImports: [
                'prom-client',
                '@opentelemetry/sdk-*',
                '@opentelemetry/exporter-*',
                '@opentelemetry/context-async-hooks',
                '@opentelemetry/resources',
                '@opentelemetry/core',
              ],
            },
            // The dashboard talks to the server through the typed client only.
            {
              sourceTag: 'name:admin',
              onlyDependOnLibsWithTags: ['layer:client', 'layer:contracts'],
            },
            {
              sourceTag: '/^name:(?!admin$).*$/',
              bannedExternalImports: [
                'react',
                'react-dom',
                'react-dom/*',
                'react/*',
                '@tanstack/*',
                '@trpc/tanstack-react-query',
              ],
            },
          ],
        },
      ],
    },
  },
  {
    // The peers of the benchmark harness (issue 20) are dev dependencies of tools/bench only:
    // nothing that ships may import them. (Core rule, so the client's type-import rule below
    // keeps its own options.)
    files: TS_FILES,
    ignores: ['tools/bench/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@langchain/langgraph-api',
                '@langchain/langgraph-api/*',
                '@langchain/langgraph-sdk',
                '@langchain/langgraph-sdk/*',
                '@mastra/*',
                '@ai-sdk/*',
              ],
              message: 'Benchmark peers are dev dependencies of tools/bench only.',
            },
          ],
        },
      ],
    },
  },
  {
    // The official LangGraph SDK is also the client the e2e specs of the LangGraph API drive
    // the server with (issue 28); the other peers stay out.
    files: ['apps/server-e2e/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@langchain/langgraph-api',
                '@langchain/langgraph-api/*',
                '@mastra/*',
                '@ai-sdk/*',
              ],
              message: 'Benchmark peers are dev dependencies of tools/bench only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/client/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@cognition/api',
              message: 'The client may import types only from the api.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // Tests compose real implementations (e.g. a runtime spec on the memory backend), as the
    // server does; production sources stay bound by the layering above.
    files: ['**/*.spec.ts', '**/src/testing/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          depConstraints: [{ sourceTag: '*', onlyDependOnLibsWithTags: ['*'] }],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/testing/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  prettier,
);
