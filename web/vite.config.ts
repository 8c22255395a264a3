// The dashboard's build (`npm run build:web`, run by `npm ci`) and its development server on port
// 5173 (`npm run dev:web`), which forwards `/api` to the service on 8080. The built files go to
// web/dist, which the service serves at `/` (src/server/routes/web.ts).

import { defineConfig } from 'vite';

export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: '/',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: true },
  server: { port: 5173, strictPort: true, proxy: { '/api': 'http://127.0.0.1:8080' } },
});
