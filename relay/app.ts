import { Hono, type Context } from 'hono';
import { DEVICE_AUTH_HEADERS } from '../shared/device-auth/deviceRequest.ts';
import { capabilityTokenSchema, approvalRequestSchema } from '../shared/messages/approvals.ts';
import { pushSubscriptionSchema } from '../shared/messages/common.ts';
import {
  denyEnvelopeSchema,
  freezeEnvelopeSchema,
  revokeGrantEnvelopeSchema,
} from '../shared/messages/envelopes.ts';
import { resumeVoteSchema } from '../shared/messages/killSwitch.ts';
import { LIMITS } from '../shared/messages/limits.ts';
import {
  pairConfirmRequestSchema,
  pairingCompletionSchema,
  pairingOfferSchema,
} from '../shared/messages/pairing.ts';
import { f, type Field } from '../shared/schema/index.ts';
import { parseJson } from '../shared/schema/parse.ts';
import { validateId } from '../shared/text/validateId.ts';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { withSecurityHeaders } from './assets/securityHeaders.ts';
import type { SignedRequest } from './fleet/deviceAuth.ts';
import type { RelyingParty } from './fleet/pairing.ts';
import { readBody } from './http/readBody.ts';
import { refusal, refuseWith, type Refusal, type RelayResult } from './http/relayError.ts';

type RelayContext = Context<{ Bindings: Env }>;

/** A refusal thrown inside a handler; onError turns it into the JSON error body. */
class RefusalError extends Error {
  readonly refusal: Refusal;
  constructor(refused: Refusal) {
    super(refused.message);
    this.refusal = refused;
  }
}

function errorResponse(c: RelayContext, refused: Refusal): Response {
  return c.json({ error: { code: refused.code, message: refused.message } }, refused.status);
}

function reply<T>(c: RelayContext, result: RelayResult<T>, status: 200 | 201 | 202 = 200): Response {
  return result.ok ? c.json(result.value as object, status) : errorResponse(c, result);
}

function fleetOf(c: RelayContext): DurableObjectStub<import('./fleet/Fleet.ts').Fleet> & { fleet: string } {
  const fleet = c.req.param('fleet') ?? '';
  if (!validateId(fleet).ok) throw new RefusalError(refusal(400, 'invalid_id', 'the fleet id is not an id'));
  return Object.assign(c.env.FLEETS.get(c.env.FLEETS.idFromName(fleet)), { fleet });
}

/** The object that knows which fleet holds an offer (offers/OfferIndex.ts). */
function offerIndexOf(
  c: RelayContext,
  offerId: string,
): DurableObjectStub<import('./offers/OfferIndex.ts').OfferIndex> {
  return c.env.OFFERS.get(c.env.OFFERS.idFromName(offerId));
}

function idParam(c: RelayContext, name: string): string {
  const value = c.req.param(name) ?? '';
  if (!validateId(value).ok) throw new RefusalError(refusal(400, 'invalid_id', `the ${name} is not an id`));
  return value;
}

/** The raw body, within the size limit. Bodies are JSON only, which also makes browsers preflight cross-site posts. */
async function body(c: RelayContext): Promise<Uint8Array<ArrayBuffer>> {
  if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
    throw new RefusalError(refusal(415, 'unsupported_media_type', 'send application/json'));
  }
  const bytes = await readBody(c.req.raw);
  if (bytes === 'too_large')
    throw new RefusalError(refusal(413, 'body_too_large', 'the body is over 64 KiB'));
  return bytes;
}

async function message<T>(
  c: RelayContext,
  schema: Field<T>,
): Promise<{ value: T; bytes: Uint8Array<ArrayBuffer> }> {
  const bytes = await body(c);
  const parsed = parseJson(schema, bytes);
  if (!parsed.ok) throw new RefusalError(refuseWith(parsed.error));
  return { value: parsed.value, bytes };
}

function signedRequest(c: RelayContext, bytes: Uint8Array<ArrayBuffer> = new Uint8Array(0)): SignedRequest {
  const url = new URL(c.req.url);
  const headers: Record<string, string> = {};
  for (const name of Object.values(DEVICE_AUTH_HEADERS)) {
    const value = c.req.header(name);
    if (value !== undefined) headers[name] = value;
  }
  return { method: c.req.method, path: url.pathname + url.search, body: bytes, headers };
}

function bearer(c: RelayContext): string | undefined {
  return c.req.header('authorization')?.match(/^Bearer ([A-Za-z0-9_-]{1,128})$/)?.[1];
}

/** The PWA's origin is this relay's: passkeys are bound to it, so assertions are checked against it. */
function relyingParty(c: RelayContext): RelyingParty {
  const { origin, hostname } = new URL(c.req.url);
  return { origins: [origin], rpId: hostname };
}

const renameSchema = f.object({ v: f.version(), name: f.text(LIMITS.nameBytes) });

export const app = new Hono<{ Bindings: Env }>();

app.onError((error, c) => {
  if (error instanceof RefusalError) return errorResponse(c, error.refusal);
  // A fault of ours, not the client's. The message may hold anything, so only the kind is logged.
  console.error('relay error:', error.name);
  return c.json({ error: { code: 'internal', message: 'internal error' } }, 500);
});

app.get('/v1/config', (c) => c.json({ v: PROTOCOL_VERSION, vapidPublicKey: c.env.VAPID_PUBLIC_KEY ?? null }));

// Pairing

app.post('/v1/fleets/:fleet/pairing', async (c) => {
  const stub = fleetOf(c);
  const { value: offer } = await message(c, pairingOfferSchema);
  if (offer.fleet !== stub.fleet)
    return errorResponse(c, refusal(400, 'context_mismatch', 'the offer is for another fleet'));
  const created = await stub.createOffer(stub.fleet, offer, bearer(c));
  if (!created.ok) return errorResponse(c, created);
  // Indexed only once the fleet took it, so a refused offer leaves nothing behind. Should the id
  // name another fleet's offer (never by chance: ids derive from 128-bit secrets), the first
  // keeps it, and this one, which no phone can reach, expires unanswered.
  if (!(await offerIndexOf(c, offer.offerId).record(stub.fleet, offer.exp)))
    return errorResponse(c, refusal(409, 'offer_closed', 'an offer with this id exists'));
  return c.json({ v: PROTOCOL_VERSION, ...created.value }, 201);
});

// The phone's way in: the link carries no fleet, only the secret the offer id derives from. The
// fleet it is sent to is the index's claim; the phone checks the host's MAC over the offer.
app.get('/v1/pairing/:offer', async (c) => {
  const offerId = idParam(c, 'offer');
  const fleet = await offerIndexOf(c, offerId).fleet();
  // The same answer as for a wrong token: an offer's existence is not disclosed.
  if (!fleet) return errorResponse(c, refusal(404, 'not_found', 'no such pairing offer'));
  const stub = c.env.FLEETS.get(c.env.FLEETS.idFromName(fleet));
  return reply(c, await stub.offerStatus(fleet, offerId, c.req.header('latch-offer-token')));
});

app.get('/v1/fleets/:fleet/pairing/:offer', async (c) => {
  const stub = fleetOf(c);
  return reply(c, await stub.offerStatus(stub.fleet, idParam(c, 'offer'), c.req.header('latch-offer-token')));
});

app.post('/v1/fleets/:fleet/pairing/:offer/complete', async (c) => {
  const stub = fleetOf(c);
  const { value: completion, bytes } = await message(c, pairingCompletionSchema);
  const result = await stub.completeOffer(
    stub.fleet,
    idParam(c, 'offer'),
    c.req.header('latch-offer-token'),
    completion,
    signedRequest(c, bytes),
    relyingParty(c),
  );
  return reply(c, result.ok ? { ok: true, value: { v: PROTOCOL_VERSION, accepted: true } } : result, 202);
});

app.post('/v1/fleets/:fleet/pairing/:offer/confirm', async (c) => {
  const stub = fleetOf(c);
  const { value: request } = await message(c, pairConfirmRequestSchema);
  return reply(c, await stub.confirmOffer(stub.fleet, idParam(c, 'offer'), request, relyingParty(c)));
});

// Hosts

app.post('/v1/fleets/:fleet/hosts/token', async (c) => {
  const stub = fleetOf(c);
  return reply(c, await stub.rotateHostToken(stub.fleet, bearer(c)));
});

app.post('/v1/fleets/:fleet/requests', async (c) => {
  const stub = fleetOf(c);
  const { value: request } = await message(c, approvalRequestSchema);
  if (request.fleet !== stub.fleet)
    return errorResponse(c, refusal(400, 'context_mismatch', 'the request is for another fleet'));
  const created = await stub.createRequest(stub.fleet, bearer(c), request);
  return reply(c, created, created.ok && !created.value.joined ? 201 : 200);
});

// The host withdraws a request nobody on it waits for any more; no body, its token is enough.
app.post('/v1/fleets/:fleet/requests/:id/withdraw', async (c) => {
  const stub = fleetOf(c);
  return reply(c, await stub.withdrawRequest(stub.fleet, bearer(c), idParam(c, 'id')));
});

app.get('/v1/fleets/:fleet/connect', async (c) => {
  const stub = fleetOf(c);
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
    return errorResponse(c, refusal(400, 'invalid_field', 'this route takes a WebSocket upgrade'));
  }
  const url = new URL(c.req.url);
  url.searchParams.set('fleet', stub.fleet);
  return stub.fetch(new Request(url, c.req.raw));
});

// Phones

app.get('/v1/fleets/:fleet/requests', async (c) => {
  const stub = fleetOf(c);
  const which = c.req.query('state') ?? 'pending';
  if (which !== 'pending' && which !== 'recent')
    return errorResponse(c, refusal(400, 'invalid_field', 'state is pending or recent'));
  return reply(c, await stub.listRequests(stub.fleet, signedRequest(c), which));
});

app.get('/v1/fleets/:fleet/requests/:id', async (c) => {
  const stub = fleetOf(c);
  return reply(c, await stub.getRequest(stub.fleet, signedRequest(c), idParam(c, 'id')));
});

app.post('/v1/fleets/:fleet/requests/:id/decision', async (c) => {
  const stub = fleetOf(c);
  const { value: token, bytes } = await message(c, capabilityTokenSchema);
  const result = await stub.decide(
    stub.fleet,
    signedRequest(c, bytes),
    idParam(c, 'id'),
    token,
    relyingParty(c),
  );
  return reply(c, result.ok ? { ok: true, value: { v: PROTOCOL_VERSION, ...result.value } } : result);
});

app.post('/v1/fleets/:fleet/requests/:id/deny', async (c) => {
  const stub = fleetOf(c);
  const { value: envelope } = await message(c, denyEnvelopeSchema);
  const result = await stub.deny(stub.fleet, idParam(c, 'id'), envelope);
  return reply(c, result.ok ? { ok: true, value: { v: PROTOCOL_VERSION, ...result.value } } : result);
});

// A phone revokes a rule it allowed; the relay carries it to the host and never learns the rule.
app.post('/v1/fleets/:fleet/grants/revoke', async (c) => {
  const stub = fleetOf(c);
  const { value: envelope } = await message(c, revokeGrantEnvelopeSchema);
  return reply(c, await stub.revokeGrant(stub.fleet, envelope));
});

app.get('/v1/fleets/:fleet/members', async (c) => {
  const stub = fleetOf(c);
  return reply(c, await stub.members(stub.fleet, signedRequest(c)));
});

app.patch('/v1/fleets/:fleet/devices/:id', async (c) => {
  const stub = fleetOf(c);
  const { value, bytes } = await message(c, renameSchema);
  return reply(c, await stub.renameDevice(stub.fleet, signedRequest(c, bytes), idParam(c, 'id'), value.name));
});

app.delete('/v1/fleets/:fleet/devices/:id', async (c) => {
  const stub = fleetOf(c);
  return reply(c, await stub.revokeDevice(stub.fleet, signedRequest(c), idParam(c, 'id')));
});

app.put('/v1/fleets/:fleet/push', async (c) => {
  const stub = fleetOf(c);
  const { value: push, bytes } = await message(c, pushSubscriptionSchema);
  const result = await stub.updatePush(stub.fleet, signedRequest(c, bytes), push);
  return reply(c, result.ok ? { ok: true, value: { v: PROTOCOL_VERSION, ...result.value } } : result);
});

// Kill switch

app.post('/v1/fleets/:fleet/freeze', async (c) => {
  const stub = fleetOf(c);
  const { value: envelope } = await message(c, freezeEnvelopeSchema);
  return reply(c, await stub.freeze(stub.fleet, envelope));
});

app.post('/v1/fleets/:fleet/resume', async (c) => {
  const stub = fleetOf(c);
  const { value: ballot } = await message(c, resumeVoteSchema);
  return reply(c, await stub.vote(stub.fleet, ballot, relyingParty(c)));
});

app.get('/v1/fleets/:fleet/state', async (c) => {
  const stub = fleetOf(c);
  const token = bearer(c);
  return reply(c, await stub.state(stub.fleet, token ? { bearer: token } : { signed: signedRequest(c) }));
});

app.all('/v1/*', (c) => errorResponse(c, refusal(404, 'not_found', 'no such route')));

// Everything else is the PWA.
app.all('*', async (c) =>
  withSecurityHeaders(await c.env.ASSETS.fetch(c.req.raw), new URL(c.req.url).pathname),
);
