import { Hono } from 'hono';
import { approvalRequestSchema, capabilityTokenSchema } from '../../shared/messages/approvals.ts';
import { assertionSchema, pushSubscriptionSchema } from '../../shared/messages/common.ts';
import {
  denyEnvelopeSchema,
  freezeEnvelopeSchema,
  revokeGrantEnvelopeSchema,
} from '../../shared/messages/envelopes.ts';
import { resumeVoteSchema } from '../../shared/messages/killSwitch.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import {
  pairConfirmRequestSchema,
  pairingCompletionSchema,
  pairingOfferSchema,
} from '../../shared/messages/pairing.ts';
import { f } from '../../shared/schema/index.ts';
import { validateId } from '../../shared/text/validateId.ts';
import { metered } from '../billing/billableMeter.ts';
import type { Fleet } from '../fleet/Fleet.ts';
import type { OfferIndex } from '../offers/OfferIndex.ts';
import { isPushService } from '../push/pushServices.ts';
import { bearer, idParam, message, relyingParty, signedRequest } from './readRequest.ts';
import { refusal, RefusalError, refusalResponse } from './relayError.ts';
import { reply } from './reply.ts';

/** The fleet a route under /v1/fleets/:fleet is for: its id and its Durable Object. */
type FleetRouteEnv = { Bindings: Env; Variables: { fleet: string; stub: DurableObjectStub<Fleet> } };

export function fleetObject(env: Env, fleet: string): DurableObjectStub<Fleet> {
  return metered(env.FLEETS.get(env.FLEETS.idFromName(fleet)));
}

/** The object that knows which fleet holds an offer (offers/OfferIndex.ts). */
export function offerIndexObject(env: Env, offerId: string): DurableObjectStub<OfferIndex> {
  return metered(env.OFFERS.get(env.OFFERS.idFromName(offerId)));
}

function refuseUnlessPushService(endpoint: string, env: Env): void {
  if (!isPushService(endpoint, env))
    throw new RefusalError(
      refusal('push_service_refused', `${new URL(endpoint).host} is not a browser's push service`),
    );
}

const renameSchema = f.object({ v: f.version(), name: f.text(LIMITS.nameBytes) });
const revokeSchema = f.object({ v: f.version(), assertion: assertionSchema });

/** The routes under /v1/fleets/:fleet; app.ts mounts them. */
export const fleetRoutes = new Hono<FleetRouteEnv>();

// Every route resolves its fleet here, once: the id is checked before any object is addressed.
fleetRoutes.use('*', async (c, next) => {
  const fleet = c.req.param('fleet') ?? '';
  if (!validateId(fleet).ok) throw new RefusalError(refusal('invalid_id', 'the fleet id is not an id'));
  c.set('fleet', fleet);
  c.set('stub', fleetObject(c.env, fleet));
  await next();
});

// Pairing

fleetRoutes.post('/pairing', async (c) => {
  const { fleet, stub } = c.var;
  const { value: offer } = await message(c.req, pairingOfferSchema);
  if (offer.fleet !== fleet)
    return refusalResponse(refusal('context_mismatch', 'the offer is for another fleet'));
  const created = await stub.createOffer(fleet, offer, bearer(c.req));
  if (!created.ok) return refusalResponse(created);
  // Indexed only once the fleet took it, so a refused offer leaves nothing behind. Should the id
  // name another fleet's offer (never by chance: ids derive from 128-bit secrets), the first
  // keeps it, and this one, which no phone can reach, expires unanswered.
  if (!(await offerIndexObject(c.env, offer.offerId).record(fleet, offer.exp)))
    return refusalResponse(refusal('offer_closed', 'an offer with this id exists'));
  return c.json(created.value, 201);
});

fleetRoutes.get('/pairing/:offer', async (c) => {
  const { fleet, stub } = c.var;
  return reply(c, await stub.offerStatus(fleet, idParam(c.req, 'offer'), c.req.header('latch-offer-token')));
});

fleetRoutes.post('/pairing/:offer/withdraw', async (c) => {
  const { fleet, stub } = c.var;
  return reply(
    c,
    await stub.withdrawOffer(fleet, idParam(c.req, 'offer'), c.req.header('latch-offer-token')),
  );
});

fleetRoutes.post('/pairing/:offer/complete', async (c) => {
  const { fleet, stub } = c.var;
  const { value: completion, bytes } = await message(c.req, pairingCompletionSchema);
  if (completion.push) refuseUnlessPushService(completion.push.endpoint, c.env);
  const result = await stub.completeOffer(
    fleet,
    idParam(c.req, 'offer'),
    c.req.header('latch-offer-token'),
    completion,
    signedRequest(c.req, bytes),
    relyingParty(c.req),
  );
  return reply(c, result, 202);
});

fleetRoutes.post('/pairing/:offer/confirm', async (c) => {
  const { fleet, stub } = c.var;
  const { value: request } = await message(c.req, pairConfirmRequestSchema);
  return reply(c, await stub.confirmOffer(fleet, idParam(c.req, 'offer'), request, relyingParty(c.req)));
});

// Hosts

fleetRoutes.post('/hosts/token', async (c) => {
  const { fleet, stub } = c.var;
  return reply(c, await stub.rotateHostToken(fleet, bearer(c.req)));
});

fleetRoutes.post('/requests', async (c) => {
  const { fleet, stub } = c.var;
  const { value: request } = await message(c.req, approvalRequestSchema);
  if (request.fleet !== fleet)
    return refusalResponse(refusal('context_mismatch', 'the request is for another fleet'));
  const created = await stub.createRequest(fleet, bearer(c.req), request);
  return reply(c, created, created.ok && !created.value.joined ? 201 : 200);
});

// The host withdraws a request nobody on it waits for any more; no body, its token is enough.
fleetRoutes.post('/requests/:id/withdraw', async (c) => {
  const { fleet, stub } = c.var;
  return reply(c, await stub.withdrawRequest(fleet, bearer(c.req), idParam(c.req, 'id')));
});

fleetRoutes.get('/connect', async (c) => {
  const { fleet, stub } = c.var;
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
    return refusalResponse(refusal('invalid_field', 'this route takes a WebSocket upgrade'));
  }
  const url = new URL(c.req.url);
  url.searchParams.set('fleet', fleet);
  return stub.fetch(new Request(url, c.req.raw));
});

// Phones

fleetRoutes.get('/requests', async (c) => {
  const { fleet, stub } = c.var;
  const which = c.req.query('state') ?? 'pending';
  if (which !== 'pending' && which !== 'recent')
    return refusalResponse(refusal('invalid_field', 'state is pending or recent'));
  return reply(c, await stub.listRequests(fleet, signedRequest(c.req), which));
});

fleetRoutes.get('/requests/:id', async (c) => {
  const { fleet, stub } = c.var;
  return reply(c, await stub.getRequest(fleet, signedRequest(c.req), idParam(c.req, 'id')));
});

fleetRoutes.post('/requests/:id/decision', async (c) => {
  const { fleet, stub } = c.var;
  const { value: token, bytes } = await message(c.req, capabilityTokenSchema);
  const signed = signedRequest(c.req, bytes);
  return reply(c, await stub.decide(fleet, signed, idParam(c.req, 'id'), token, relyingParty(c.req)));
});

fleetRoutes.post('/requests/:id/deny', async (c) => {
  const { fleet, stub } = c.var;
  const { value: envelope } = await message(c.req, denyEnvelopeSchema);
  return reply(c, await stub.deny(fleet, idParam(c.req, 'id'), envelope));
});

// A phone revokes a rule it allowed; the relay carries it to the host and never learns the rule.
fleetRoutes.post('/grants/revoke', async (c) => {
  const { fleet, stub } = c.var;
  const { value: envelope } = await message(c.req, revokeGrantEnvelopeSchema);
  return reply(c, await stub.revokeGrant(fleet, envelope));
});

fleetRoutes.get('/members', async (c) => {
  const { fleet, stub } = c.var;
  return reply(c, await stub.members(fleet, signedRequest(c.req)));
});

fleetRoutes.patch('/devices/:id', async (c) => {
  const { fleet, stub } = c.var;
  const { value, bytes } = await message(c.req, renameSchema);
  const signed = signedRequest(c.req, bytes);
  return reply(c, await stub.renameDevice(fleet, signed, idParam(c.req, 'id'), value.name));
});

// Face ID too (members.ts): the signed request says which phone asks, the assertion that a person does.
fleetRoutes.delete('/devices/:id', async (c) => {
  const { fleet, stub } = c.var;
  const { value, bytes } = await message(c.req, revokeSchema);
  const signed = signedRequest(c.req, bytes);
  return reply(
    c,
    await stub.revokeDevice(fleet, signed, idParam(c.req, 'id'), value.assertion, relyingParty(c.req)),
  );
});

fleetRoutes.put('/push', async (c) => {
  const { fleet, stub } = c.var;
  const { value: push, bytes } = await message(c.req, pushSubscriptionSchema);
  refuseUnlessPushService(push.endpoint, c.env);
  return reply(c, await stub.updatePush(fleet, signedRequest(c.req, bytes), push));
});

// Kill switch

fleetRoutes.post('/freeze', async (c) => {
  const { fleet, stub } = c.var;
  const { value: envelope } = await message(c.req, freezeEnvelopeSchema);
  return reply(c, await stub.freeze(fleet, envelope));
});

fleetRoutes.post('/resume', async (c) => {
  const { fleet, stub } = c.var;
  const { value: ballot } = await message(c.req, resumeVoteSchema);
  return reply(c, await stub.vote(fleet, ballot, relyingParty(c.req)));
});

fleetRoutes.get('/state', async (c) => {
  const { fleet, stub } = c.var;
  // A host says who it is with its token, a phone with its signature: an Authorization header
  // that is no valid token is a host refused, not a phone that did not sign.
  const asHost = c.req.header('authorization') !== undefined;
  return reply(
    c,
    await stub.state(fleet, asHost ? { bearer: bearer(c.req) } : { signed: signedRequest(c.req) }),
  );
});
