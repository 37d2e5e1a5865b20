// The relay Worker: the Hono app for /v1 and the PWA, and the per-fleet Durable Object.
export { app as default } from './app.ts';
export { Fleet } from './fleet/Fleet.ts';
