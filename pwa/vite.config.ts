import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

// The phone app, built into dist/pwa, which the relay serves (wrangler.toml [assets]).
// The service worker is our own TypeScript (injectManifest): Workbox only precaches.

/**
 * The schema's field makers (shared/schema/fields.ts, messages/common.ts) build a checker and do
 * nothing else. Rolldown drops an unused schema's `f.object(…)` but keeps the calls that make its
 * fields (`version(), id(), …`), since it does not see through the `f` namespace: Terser drops
 * them when told these names are pure, 830 bytes (gzipped) of the app and the worker. Terser
 * matches the bare name, so no other function in the bundles may be called by one of these names
 * for its effect (none is: checked on the bundles as Rolldown hands them over).
 */
const SCHEMA_FIELDS = [
  'version',
  'id',
  'text',
  'base64url',
  'integer',
  'timestamp',
  'boolean',
  'literal',
  'oneOf',
  'url',
  'array',
  'optional',
  'object',
  'variant',
  'nonce',
  'digest',
  'p256PublicKey',
];

/**
 * Terser in four passes: the app and the worker ship ~330 bytes (gzipped) less than in one (a
 * fifth saves 1). Reading a property has no side effect in our code or the libraries' (no getter
 * that does, no `el.offsetHeight` for a reflow), so an unused read may go: 45 bytes more.
 */
const TERSER = { compress: { passes: 4, pure_getters: true, pure_funcs: SCHEMA_FIELDS } };

/**
 * Each Workbox module carries a mark of its version (`self['workbox:core:7.4.0'] && _()` in a
 * try), there for tools that search a bundle for it, which does nothing when it runs: the worker
 * ships without them, 50 bytes (gzipped) of the JavaScript budget.
 */
const WITHOUT_VERSION_MARKS = {
  name: 'workbox-without-version-marks',
  load: (id: string) => (/[\\/]workbox-[a-z-]+[\\/]_version\.js$/.test(id) ? '' : undefined),
};

export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  plugins: [
    preact(),
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'src',
      filename: 'sw.ts',
      injectRegister: false,
      manifest: {
        name: 'Latch',
        short_name: 'Latch',
        description: 'Approve or refuse what your AI agents want to do, and freeze them all at once.',
        start_url: '/',
        scope: '/',
        display: 'standalone',
        background_color: '#111827',
        theme_color: '#111827',
        icons: [
          { src: '/icons/icon-192.png', sizes: '192x192', type: 'image/png' },
          { src: '/icons/icon-512.png', sizes: '512x512', type: 'image/png' },
          { src: '/icons/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      },
      // A classic script: the "es" format builds the worker with a Rollup option Vite 8 deprecates,
      // a warning on every build that nobody could act on. The worker imports nothing at run time.
      // Its build takes the app's minifier but not its options: the plugin hands them over.
      injectManifest: {
        globPatterns: ['**/*.{js,css,html,png,webmanifest}'],
        rollupFormat: 'iife',
        buildPlugins: {
          vite: [
            { name: 'sw-terser', config: () => ({ build: { terserOptions: TERSER } }) },
            WITHOUT_VERSION_MARKS,
          ],
        },
      },
    }),
  ],
  // No module-preload polyfill: the app is one file, with nothing to preload. Terser over an ES
  // module ships ~400 bytes (gzipped) less than esbuild's minifier.
  build: {
    outDir: '../dist/pwa',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    minify: 'terser',
    terserOptions: { ...TERSER, module: true },
    // On a busy machine the build says which plugin took its time (terser, mostly): a block of
    // text in npm start's output that nobody acts on.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
});
