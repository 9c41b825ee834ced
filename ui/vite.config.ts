import { defineConfig } from 'vite'
import path from 'node:path'

// The console is built into ui/dist, the folder wrangler.toml's [assets] serves. index.html sits at the folder's
// root (the single-page fallback serves /index.html for every navigation that matches no file), the scripts
// and styles under /ui/assets/ (so the console's own files all live under /ui/). The typed client is imported
// from ../src/client (one client for the CLI, the tests and the console).
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  publicDir: path.join(import.meta.dirname, 'public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(import.meta.dirname, 'dist'),
    emptyOutDir: true,
    assetsDir: 'ui/assets',
    target: 'es2022',
    // no inline <script> or <style>: the CSP (public/_headers) allows only files from this origin
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8787' } },
})
