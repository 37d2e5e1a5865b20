import { Hono } from 'hono';
import { RELAY_TIME_HEADER } from '../shared/device-auth/relayTime.ts';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { withSecurityHeaders } from './assets/securityHeaders.ts';
import { countBillable, meterReading } from './billing/billableMeter.ts';
import { fleetObject, fleetRoutes, offerIndexObject } from './http/fleetRoutes.ts';
import { methodNotAllowed, refuseOtherMethods } from './http/methodNotAllowed.ts';
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

// The billable-event meter, for benchmarks of a local relay: only where its operator turned it on
// (elsewhere it is an unknown route), and ahead of the counting below so that reading it is free.
app.use('/v1/meter', async (c, next) => {
  if (c.env.BILLABLE_METER !== 'on' || c.req.method !== 'GET') return next();
  return c.json({ v: PROTOCOL_VERSION, ...meterReading() });
});

// Every request the Worker serves is billed, the app's files included (it runs first for them).
app.use('*', async (_c, next) => {
  countBillable('workerRequests');
  await next();
});

// Over https, every answer tells the browser to come back only over https: a phone on a hostile
// network then never loads the app, or sends its signed requests, over plain http first. Left
// out on a local relay's http, where browsers ignore it.
app.use('*', async (c, next) => {
  await next();
  if (c.res.status !== 101 && new URL(c.req.url).protocol === 'https:')
    c.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
});

// Every answer under /v1/ carries the relay's time, refusals included: phones sign with it
// (shared/device-auth/relayTime.ts). None may be kept by an HTTP cache: the phone keeps what it
// shows offline itself. A WebSocket upgrade is left as it is (its headers are fixed).
app.use('/v1/*', async (c, next) => {
  await next();
  if (c.res.status === 101) return;
  c.header(RELAY_TIME_HEADER, String(Date.now()));
  c.header('cache-control', 'no-store');
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

// A route asked with a method it lacks is there all the same: 405, not "no such route".
refuseOtherMethods(app, (path) => path.startsWith('/v1/'));
app.all('/v1/*', () => refusalResponse(refusal('not_found', 'no such route')));

// Everything else is the PWA, which is only read. The asset server is never handed a body: one
// sent with a POST there left the connection hanging in the local runtime.
app.on(['GET', 'HEAD'], '*', async (c) => {
  const read = new Request(c.req.url, { method: c.req.method, headers: c.req.raw.headers });
  return withSecurityHeaders(await c.env.ASSETS.fetch(read), new URL(c.req.url).pathname);
});
app.all('*', () => methodNotAllowed(['GET', 'HEAD'], "the app's files are only read"));
