import react from '@vitejs/plugin-react';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

/**
 * The dashboard: built into dist/apps/admin and served by the server under /admin (same origin,
 * so the tRPC client needs no CORS). The libraries it may use (client, contracts) are bundled
 * from source through the workspace's path aliases.
 */
export default defineConfig({
  root: here,
  base: '/admin/',
  plugins: [react()],
  // index.html carries `<meta property="csp-nonce" nonce="…">` and nonce attributes with this
  // placeholder, which the server replaces with a fresh nonce per page load (http/admin.ts).
  html: { cspNonce: 'COGNITION_CSP_NONCE' },
  resolve: {
    alias: {
      '@cognition/client': path.join(root, 'libs/client/src/index.ts'),
      '@cognition/contracts': path.join(root, 'libs/contracts/src/index.ts'),
    },
  },
  build: {
    outDir: path.join(root, 'dist/apps/admin'),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024,
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.tsx', 'src/**/*.test.ts'],
    globals: false,
  },
});
