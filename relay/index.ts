// The relay Worker: the Hono app for /v1 and the PWA, the per-fleet Durable Object, and the
// per-offer one that finds an offer's fleet.
export { app as default } from './app.ts';
export { Fleet } from './fleet/Fleet.ts';
export { OfferIndex } from './offers/OfferIndex.ts';
