import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The page calls /trpc on its own origin; the dev server (`npm run dev`) and the preview of a
// build (`npm run preview`) pass those requests on to the Cognition server, so the server needs
// no CORS setting. With API keys, the proxy adds the key: it never reaches the page's code.
const target = process.env.COGNITION_URL ?? 'http://127.0.0.1:8000';
const apiKey = process.env.COGNITION_API_KEY;
const proxy = {
  '/trpc': {
    target,
    changeOrigin: true,
    headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
  },
};

export default defineConfig({
  plugins: [react()],
  server: { host: '127.0.0.1', proxy },
  preview: { host: '127.0.0.1', proxy },
});
