import { Hono } from 'hono';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { withSecurityHeaders } from './assets/securityHeaders.ts';
import { fleetObject, fleetRoutes, offerIndexObject } from './http/fleetRoutes.ts';
import { idParam } from './http/readRequest.ts';
import { refusal, RefusalError, refusalResponse } from './http/relayError.ts';
import { reply } from './http/reply.ts';

export const app = new Hono<{ Bindings: Env }>();

app.onError((error) => {
  if (error instanceof RefusalError) return refusalResponse(error.refusal);
  // A fault of ours, not the client's. The message may hold anything, so only the kind is logged.
  console.error('relay error:', error.name);
  return Response.json({ error: { code: 'internal', message: 'internal error' } }, { status: 500 });
});

app.get('/v1/config', (c) => c.json({ v: PROTOCOL_VERSION, vapidPublicKey: c.env.VAPID_PUBLIC_KEY ?? null }));

// The phone's way in: the link carries no fleet, only the secret the offer id derives from. The
// fleet it is sent to is the index's claim; the phone checks the host's MAC over the offer.
app.get('/v1/pairing/:offer', async (c) => {
  const offerId = idParam(c.req, 'offer');
  const fleet = await offerIndexObject(c.env, offerId).fleet();
  // The same answer as for a wrong token: an offer's existence is not disclosed.
  if (!fleet) return refusalResponse(refusal('not_found', 'no such pairing offer'));
  const status = await fleetObject(c.env, fleet).offerStatus(
    fleet,
    offerId,
    c.req.header('latch-offer-token'),
  );
  return reply(c, status);
});

app.route('/v1/fleets/:fleet', fleetRoutes);

app.all('/v1/*', () => refusalResponse(refusal('not_found', 'no such route')));

// Everything else is the PWA.
app.all('*', async (c) =>
  withSecurityHeaders(await c.env.ASSETS.fetch(c.req.raw), new URL(c.req.url).pathname),
);
