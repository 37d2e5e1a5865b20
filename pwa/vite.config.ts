import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The phone app. Built into dist/pwa, which the relay serves (wrangler.toml [assets]).
export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  plugins: [preact()],
  build: { outDir: '../dist/pwa', emptyOutDir: true },
});
