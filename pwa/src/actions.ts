import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import { openRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { Grant, RequestDetails } from '../../shared/messages/approvals.ts';
import type { Assertion } from '../../shared/messages/common.ts';
import type { ReportScope } from '../../shared/messages/envelopes.ts';
import { fleetStateSchema, type FleetState } from '../../shared/messages/killSwitch.ts';
import {
  MOST_LISTED,
  REQUEST_STATES,
  requestListSchema,
  requestViewSchema,
  type RequestList,
  type RequestView,
} from '../../shared/messages/relayViews.ts';
import type { Field } from '../../shared/schema/field.ts';
import { f } from '../../shared/schema/index.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { showingLastKnown } from './connectivity.ts';
import {
  loadLastKnown,
  loadMemberships,
  saveLastKnown,
  takeTappedPush,
  type DeviceIdentity,
} from './keystore.ts';
import { closeNotifications } from './notifications.ts';
import { fleetPath, MOST_ANSWER_BYTES, relayCall, type ApiResult } from './relayApi.ts';
import { relayNow } from './relayClock.ts';

/**
 * A request opened on this phone: what the relay says, what the host sealed (its host named as
 * this phone learned it at pairing, openRequest), what we would sign.
 */
export interface OpenedRequest {
  fleet: string;
  view: RequestView;
  details: RequestDetails;
  binding: ApprovalBinding;
}

const stateChange = /* @__PURE__ */ f.object({
  v: f.version(),
  state: f.oneOf(REQUEST_STATES),
  /** A deny's report went to the host, even when the request had ended (its `state`). */
  reported: f.optional(f.boolean()),
});

/** What this page last kept of each read, so that an unchanged answer is not written again. */
const kept = new Map<string, string>();

/**
 * A read whose last answer is kept (in IndexedDB): when the relay cannot be reached, the app shows
 * that answer instead, and the offline banner says when it was known. Only "offline" falls back;
 * a refusal (a revoked phone, say) is shown as it is.
 */
async function keptRead<T>(
  identity: DeviceIdentity,
  path: string,
  schema: Field<T>,
): Promise<{ result: ApiResult<T>; knownAt?: number }> {
  const result = await relayCall('GET', path, schema, { identity });
  if (result.ok) {
    const json = JSON.stringify(result.value);
    if (kept.get(path) !== json) {
      kept.set(path, json);
      await saveLastKnown(path, { at: Date.now(), json }).catch(() => kept.delete(path));
    }
    return { result };
  }
  if (result.code !== 'offline') return { result };
  const last = await loadLastKnown(path).catch(() => undefined);
  const parsed = last && parseJson(schema, last.json, MOST_ANSWER_BYTES);
  if (!last || !parsed?.ok) return { result };
  showingLastKnown(last.at);
  return { result: parsed, knownAt: last.at };
}

/**
 * The pending or recent requests of a fleet. Offline, the last list known, less what has expired
 * since. A fresh pending list that is not full (every pending request of the phone's hosts) also
 * closes the notifications of requests no longer in it: the way an iPhone, which gets no close
 * push, loses a stale one.
 */
export async function listRequests(
  identity: DeviceIdentity,
  fleet: string,
  which: 'pending' | 'recent',
): Promise<ApiResult<RequestList>> {
  const askedAt = Date.now();
  const { result, knownAt } = await keptRead(
    identity,
    fleetPath(fleet, `/requests?state=${which}`),
    requestListSchema,
  );
  if (!result.ok || which === 'recent') return result;
  if (knownAt !== undefined) {
    const now = relayNow();
    return {
      ok: true,
      value: { ...result.value, requests: result.value.requests.filter((r) => r.exp > now) },
    };
  }
  const { requests } = result.value;
  const pending = new Set(requests.map((request) => request.requestId));
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  // A full list left requests out that still wait (a host's flood, review rh): it closes nothing.
  if (registration && requests.length < MOST_LISTED)
    await closeNotifications(registration, fleet, (id) => pending.has(id), { shownBefore: askedAt }).catch(
      () => {},
    );
  return result;
}

export const fetchRequest = (
  identity: DeviceIdentity,
  fleet: string,
  requestId: string,
): Promise<ApiResult<RequestView>> =>
  relayCall('GET', fleetPath(fleet, `/requests/${encodeURIComponent(requestId)}`), requestViewSchema, {
    identity,
  });

/** The fleet's switch; offline, the last state known. */
export const fetchState = async (identity: DeviceIdentity, fleet: string): Promise<ApiResult<FleetState>> =>
  (await keptRead(identity, fleetPath(fleet, '/state'), fleetStateSchema)).result;

// Nothing here asks for a passkey, so the service worker can use it too (deny from a notification).

/** The hosts of `fleet` this phone paired with, under the names it learned then. */
const knownHosts = async (fleet: string) =>
  (await loadMemberships()).find((membership) => membership.fleet === fleet)?.hosts ?? [];

/**
 * Opens the sealed details with this phone's key, and derives what an approval signs: the hash of
 * exactly these details, so the text shown is the text approved. The host is shown by the name
 * this phone learned for its id at pairing, not the one its daemon sealed (review rh: a host of
 * the fleet could name another); a host this phone did not pair with opens nothing.
 */
export async function openRequest(
  identity: DeviceIdentity,
  fleet: string,
  view: RequestView,
): Promise<OpenedRequest | { error: string }> {
  if (!view.box) return { error: 'This request was not sealed for this phone.' };
  const host = (await knownHosts(fleet)).find(({ id }) => id === view.host);
  if (!host) return { error: 'Its computer is not paired with this phone.' };
  const context = { fleet, host: view.host, requestId: view.requestId, device: identity.id };
  const opened = await openRequestDetails(
    view.box,
    { privateKey: identity.ecdh.privateKey, publicKeyRaw: fromBase64url(identity.ecdhKey) },
    context,
  );
  if (!opened.ok) return { error: `Its details cannot be opened here (${opened.error.code}).` };
  const details = opened.value;
  // The box opened only for this fleet, host and request, so the details name them. The binding
  // is of the details as sealed (the daemon's hash), whatever name is shown.
  return {
    fleet,
    view,
    details: { ...details, hostName: host.name },
    binding: await detailsBinding(details),
  };
}

/**
 * A request from the sealed box its push carried, opened as any other (openRequest). The push
 * names no host, and a box opens for its own host alone: each host of the fleet this phone is
 * paired with is tried. Nor does it name the conversation: '' until the relay is asked (DenySession),
 * 'none' when the details name no agent session.
 */
export async function openPushedBox(
  identity: DeviceIdentity,
  fleet: string,
  requestId: string,
  box: string,
): Promise<OpenedRequest | undefined> {
  for (const { id: host } of await knownHosts(fleet)) {
    const view: RequestView = {
      requestId,
      host,
      conversation: '',
      risk: 'low',
      createdAt: 0,
      exp: 0,
      state: 'pending',
      box,
    };
    const opened = await openRequest(identity, fleet, view);
    if ('error' in opened) continue;
    const { details } = opened;
    return {
      ...opened,
      view: {
        ...view,
        conversation: details.session === undefined ? 'none' : '',
        risk: details.risk,
        createdAt: details.createdAt,
        exp: details.exp,
      },
    };
  }
  return undefined;
}

/**
 * Past this, a tapped push is not trusted to say the request still waits (an iPhone gets no close
 * push): the screen asks the relay. Sooner, a request decided elsewhere meanwhile is refused by
 * the relay when answered, and the screen says so.
 */
const TAPPED_PUSH_FRESH_MS = 2 * 60_000;

/** The request whose notification was just tapped, from the box its push carried; else undefined. */
export async function tappedRequest(
  identity: DeviceIdentity,
  fleet: string,
  requestId: string,
): Promise<OpenedRequest | undefined> {
  const tapped = await takeTappedPush().catch(() => undefined);
  if (tapped?.fleet !== fleet || tapped.requestId !== requestId) return undefined;
  if (Date.now() - tapped.pushedAt > TAPPED_PUSH_FRESH_MS) return undefined;
  return openPushedBox(identity, fleet, requestId, tapped.box);
}

/**
 * Approve: the passkey's assertion over approvalChallenge(request.binding), as a token to the
 * relay; with `grant`, over the binding with that grant (allowedRules.ts), which the token names.
 */
export async function approve(
  identity: DeviceIdentity,
  request: OpenedRequest,
  assertion: Assertion,
  grant?: Grant,
) {
  const token = {
    v: PROTOCOL_VERSION,
    fleet: request.fleet,
    host: request.view.host,
    requestId: request.view.requestId,
    decision: 'approve' as const,
    ...(grant ? { grant } : {}),
    device: identity.id,
    assertion,
  };
  return relayCall(
    'POST',
    fleetPath(request.fleet, `/requests/${encodeURIComponent(request.view.requestId)}/decision`),
    stateChange,
    { identity, body: token },
  );
}

/**
 * Deny: one tap, signed with the device key (refusing is the safe direction: no biometric). With
 * `report` ("I didn't expect this"), the host also refuses the session or freezes the fleet, even
 * when the request ended before the deny came.
 */
export async function deny(
  identity: DeviceIdentity,
  fleet: string,
  host: string,
  requestId: string,
  report?: ReportScope,
) {
  return relayCall('POST', fleetPath(fleet, `/requests/${encodeURIComponent(requestId)}/deny`), stateChange, {
    signedBody: (relayNow) =>
      signEnvelope(
        'deny',
        { fleet, host, requestId, ...(report ? { report: { scope: report } } : {}) },
        { role: 'device', id: identity.id },
        identity.signing.privateKey,
        relayNow,
      ),
  });
}

/** The panic button: freezes the fleet, signed with the device key. */
export async function freeze(identity: DeviceIdentity, fleet: string, reason: string) {
  return relayCall('POST', fleetPath(fleet, '/freeze'), fleetStateSchema, {
    signedBody: (relayNow) =>
      signEnvelope(
        'freeze',
        { fleet, reason },
        { role: 'device', id: identity.id },
        identity.signing.privateKey,
        relayNow,
      ),
  });
}

/**
 * A vote to resume: the passkey's assertion over resumeChallenge({ fleet, freeze }), where
 * `freeze` is the id this phone computed from the freeze's envelope (kill-switch/freezeId).
 */
export async function voteToResume(
  identity: DeviceIdentity,
  fleet: string,
  freeze: string,
  assertion: Assertion,
) {
  return relayCall('POST', fleetPath(fleet, '/resume'), fleetStateSchema, {
    body: { v: PROTOCOL_VERSION, fleet, freeze, device: identity.id, assertion },
  });
}
