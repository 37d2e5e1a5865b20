import { approvalBinding } from '../../shared/approvals/approvalBinding.ts';
import { verifyCapabilityToken } from '../../shared/approvals/verifyCapabilityToken.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import type { ApprovalRequest, CapabilityToken, Decision } from '../../shared/messages/approvals.ts';
import type { DenyEnvelope } from '../../shared/messages/envelopes.ts';
import {
  MOST_LISTED,
  type RequestCreated,
  type RequestList,
  type RequestState,
  type RequestView,
} from '../../shared/messages/relayViews.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';
import { credentialOfRow } from '../../shared/pairing/storedDevice.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { refusal, refuseWith, type RelayResult, type Unversioned } from '../http/relayError.ts';
import {
  count,
  row,
  rows,
  type DeviceRow,
  type FleetContext,
  type HostRow,
  type RequestRow,
} from './context.ts';
import { activeDevice, consumeNonce } from './deviceAuth.ts';
import { notifyClosed, notifyNewRequest } from './notify.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';

/** A request may wait at most a day; the daemon's default is five minutes. */
const MAX_REQUEST_TTL_MS = 24 * 3600_000;
/**
 * Pending requests a host may hold at once: as many as a phone lists (MOST_LISTED), far more than
 * a person answers; a host (a stranger's, or one gone rogue) cannot store more.
 */
export const MOST_PENDING_PER_HOST = 1000;
/** Decided and expired requests stay listed this long under "recent". */
export const RECENT_MS = 24 * 3600_000;

export function isPairedWith(ctx: FleetContext, host: string, device: string): boolean {
  return row(ctx.sql, 'SELECT 1 FROM pairings WHERE host = ? AND device = ?', host, device) !== undefined;
}

/**
 * Stores a host's request: metadata in the clear, one sealed box per phone paired with the host
 * (a box for another phone, one revoked since the host sealed it, is dropped). A request with the
 * dedup key of a pending one joins it instead; the same request sent again (a daemon retrying) is
 * answered as before, and another one under a taken id is refused.
 */
export function createRequest(
  ctx: FleetContext,
  host: HostRow,
  request: ApprovalRequest,
): RelayResult<Unversioned<RequestCreated>> {
  const now = ctx.now();
  if (request.host !== host.id) return refusal('forbidden', 'a host can only ask for itself');
  if (request.exp <= now) return refusal('expired', 'the request expired before it arrived');
  if (request.exp > now + MAX_REQUEST_TTL_MS) return refusal('invalid_field', 'exp is more than a day away');
  // Checked before anything is written: a second box for one device failed its insert half-way.
  if (new Set(request.sealed.map(({ device }) => device)).size !== request.sealed.length)
    return refusal('invalid_field', 'sealed names a device more than once');

  const existing = row<RequestRow>(ctx.sql, 'SELECT * FROM requests WHERE request_id = ?', request.requestId);
  if (existing) {
    if (existing.host !== host.id || !sameRequest(ctx, existing, request))
      return refusal('request_id_taken', 'this request id was sent before, with other content');
    return { ok: true, value: { requestId: existing.request_id, joined: false } };
  }
  const boxes = request.sealed.filter(({ device }) => isPairedWith(ctx, host.id, device));
  if (boxes.length === 0)
    return refusal('no_paired_phone', 'no sealed box is for a phone paired with this host');
  const duplicate = row<RequestRow>(
    ctx.sql,
    "SELECT * FROM requests WHERE host = ? AND dedup_key = ? AND state = 'pending' AND exp > ?",
    host.id,
    request.dedupKey,
    now,
  );
  if (duplicate) return { ok: true, value: { requestId: duplicate.request_id, joined: true } };
  const pending = count(
    ctx.sql,
    "SELECT COUNT(*) AS n FROM (SELECT 1 FROM requests WHERE host = ? AND state = 'pending' AND exp > ? LIMIT ?)",
    host.id,
    now,
    MOST_PENDING_PER_HOST,
  );
  if (pending >= MOST_PENDING_PER_HOST)
    return refusal('too_many_requests', `a host holds at most ${MOST_PENDING_PER_HOST} pending requests`);

  ctx.sql.exec(
    `INSERT INTO requests (request_id, host, conversation, dedup_key, risk, created_at, exp, request_hash, nonce, state)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
    request.requestId,
    host.id,
    request.conversation,
    request.dedupKey,
    request.risk,
    now,
    request.exp,
    request.requestHash,
    request.nonce,
  );
  for (const { device, box } of boxes) {
    ctx.sql.exec(
      'INSERT INTO sealed_boxes (request_id, device, box) VALUES (?, ?, ?)',
      request.requestId,
      device,
      box,
    );
  }
  notifyNewRequest(ctx, { requestId: request.requestId, host: host.id, conversation: request.conversation });
  return { ok: true, value: { requestId: request.requestId, joined: false } };
}

/** Whether `request` is the stored one sent again: every member kept of it, each box included. */
function sameRequest(ctx: FleetContext, stored: RequestRow, request: ApprovalRequest): boolean {
  const storedBoxes = new Map(
    rows<{ device: string; box: string }>(
      ctx.sql,
      'SELECT device, box FROM sealed_boxes WHERE request_id = ?',
      stored.request_id,
    ).map(({ device, box }) => [device, box]),
  );
  const resentBoxes = request.sealed.filter(({ device }) => storedBoxes.has(device));
  return (
    stored.conversation === request.conversation &&
    stored.dedup_key === request.dedupKey &&
    stored.risk === request.risk &&
    stored.exp === request.exp &&
    stored.request_hash === request.requestHash &&
    stored.nonce === request.nonce &&
    resentBoxes.length === storedBoxes.size &&
    resentBoxes.every(({ device, box }) => storedBoxes.get(device) === box)
  );
}

/** A request as a phone's list reads it: its row, its insertion order and the box for that phone. */
type ListedRow = RequestRow & { seq: number; box: string | null };

function view(stored: ListedRow): RequestView {
  return {
    requestId: stored.request_id,
    host: stored.host,
    conversation: stored.conversation,
    risk: stored.risk as RiskLevel,
    createdAt: stored.created_at,
    exp: stored.exp,
    state: stored.state as RequestState,
    ...(stored.decision ? { decision: stored.decision as Decision } : {}),
    ...(stored.decided_by ? { decidedBy: stored.decided_by } : {}),
    ...(stored.decided_at ? { decidedAt: stored.decided_at } : {}),
    ...(stored.box ? { box: stored.box } : {}),
  };
}

const VISIBLE_TO_DEVICE = `
  SELECT r.*, r.rowid AS seq, b.box FROM requests r
    JOIN pairings p ON p.host = r.host AND p.device = ?
    LEFT JOIN sealed_boxes b ON b.request_id = r.request_id AND b.device = p.device`;

/**
 * What a phone lists: the pending requests of its hosts (pushed or not), oldest first (a new
 * request goes below, so the list does not shift under a finger about to tap); or the recent
 * past, newest first. Past MOST_LISTED pending, the list is shared out among the hosts
 * (pendingListed).
 */
export function listRequests(
  ctx: FleetContext,
  device: string,
  which: 'pending' | 'recent',
): Unversioned<RequestList> {
  const now = ctx.now();
  const found =
    which === 'pending'
      ? pendingListed(ctx, device, now).sort((a, b) => newestFirst(b, a))
      : rows<ListedRow>(
          ctx.sql,
          `${VISIBLE_TO_DEVICE} WHERE (r.state != 'pending' OR r.exp <= ?) AND r.created_at > ? ORDER BY r.created_at DESC LIMIT 100`,
          device,
          now,
          now - RECENT_MS,
        );
  return { requests: found.map(view) };
}

const newestFirst = (a: ListedRow, b: ListedRow) => b.created_at - a.created_at || b.seq - a.seq;

/**
 * The pending requests a phone lists: each host's newest first, one of each host in turn, the
 * first MOST_LISTED of that. So every host has its newest MOST_LISTED / hosts listed at least
 * (its share; what a host leaves unused goes to the others), and one host's flood (review rh: a
 * compromised host's 1000 pending) cannot push another's newest requests out of the list; what
 * is left out is each host's oldest. Each host's requests are read newest first by index, a share
 * at a time, so a poll reads about what it lists, not all that waits (review rv10c: ranking all
 * of 64,000 pending read 577,194 rows).
 */
function pendingListed(ctx: FleetContext, device: string, now: number): ListedRow[] {
  const nextOfHost = (host: string, after: ListedRow | undefined, most: number) =>
    rows<ListedRow>(
      ctx.sql,
      `SELECT r.*, r.rowid AS seq, b.box FROM requests r
         LEFT JOIN sealed_boxes b ON b.request_id = r.request_id AND b.device = ?
        WHERE r.host = ? AND r.state = 'pending' AND r.exp > ? AND (r.created_at, r.rowid) < (?, ?)
        ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?`,
      device,
      host,
      now,
      after?.created_at ?? Number.MAX_SAFE_INTEGER,
      after?.seq ?? Number.MAX_SAFE_INTEGER,
      most,
    );
  const listed: ListedRow[] = [];
  let open = rows<{ host: string }>(ctx.sql, 'SELECT host FROM pairings WHERE device = ?', device).map(
    ({ host }) => ({ host, last: undefined as ListedRow | undefined }),
  );
  while (open.length > 0 && listed.length < MOST_LISTED) {
    const room = MOST_LISTED - listed.length;
    const share = Math.floor(room / open.length);
    if (share === 0) {
      // Fewer places than hosts: one more of each host's, the newest of them. Hosts that had none
      // left leave their places to the others' next turn (review rv1: the list came out short).
      const nextTurn = open.flatMap(({ host, last }) =>
        nextOfHost(host, last, 1).map((next) => ({ host, last: next })),
      );
      nextTurn.sort((a, b) => newestFirst(a.last, b.last));
      listed.push(...nextTurn.slice(0, room).map(({ last }) => last));
      open = nextTurn;
      continue;
    }
    // Every open host gets its share; one that has fewer is done, and leaves its rest to others.
    const stillOpen: typeof open = [];
    for (const { host, last } of open) {
      const next = nextOfHost(host, last, share);
      listed.push(...next);
      if (next.length === share) stillOpen.push({ host, last: next.at(-1) });
    }
    open = stillOpen;
  }
  return listed;
}

export function getRequest(ctx: FleetContext, device: string, requestId: string): RelayResult<RequestView> {
  const found = row<ListedRow>(ctx.sql, `${VISIBLE_TO_DEVICE} WHERE r.request_id = ?`, device, requestId);
  return found ? { ok: true, value: view(found) } : refusal('not_found', 'no such request for this phone');
}

/** Marks a pending request decided, unless something decided it first. Synchronous: atomic. */
function settle(
  ctx: FleetContext,
  requestId: string,
  state: 'approved' | 'denied',
  decision: Decision,
  device: string,
): boolean {
  const now = ctx.now();
  const current = row<RequestRow>(ctx.sql, 'SELECT * FROM requests WHERE request_id = ?', requestId);
  if (!current || current.state !== 'pending' || current.exp <= now) return false;
  ctx.sql.exec(
    'UPDATE requests SET state = ?, decision = ?, decided_by = ?, decided_at = ? WHERE request_id = ?',
    state,
    decision,
    device,
    now,
    requestId,
  );
  return true;
}

/** Why a request cannot be decided (or withdrawn) now, if it cannot. */
export function undecidable(ctx: FleetContext, stored: RequestRow): RelayResult<never> | undefined {
  if (stored.state === 'withdrawn')
    return refusal('withdrawn', 'the agent stopped waiting for an answer; nothing was approved');
  if (stored.state !== 'pending')
    return refusal('already_decided', `the request was already ${stored.state}`);
  if (stored.exp <= ctx.now()) return refusal('expired', 'the request expired');
  return undefined;
}

/**
 * A phone's approval. The daemon will verify the token itself; the relay checks what it can
 * too (signature against the stored passkey, counter, challenge, origin) and lets only the
 * first valid decision through.
 */
export async function decide(
  ctx: FleetContext,
  device: DeviceRow,
  requestId: string,
  token: CapabilityToken,
  relying: RelyingParty,
): Promise<RelayResult<{ state: RequestState }>> {
  if (token.requestId !== requestId || token.fleet !== ctx.fleet || token.device !== device.id) {
    return refusal('context_mismatch', 'the token is for another request or device');
  }
  if (token.decision !== 'approve')
    return refusal('invalid_field', 'refuse with the deny route, signed by the device key');
  const stored = row<RequestRow>(ctx.sql, 'SELECT * FROM requests WHERE request_id = ?', requestId);
  if (!stored || !isPairedWith(ctx, stored.host, device.id))
    return refusal('not_found', 'no such request for this phone');
  if (token.host !== stored.host) return refusal('context_mismatch', 'the token names another host');
  const notNow = undecidable(ctx, stored);
  if (notNow) return notNow;

  const verified = await verifyCapabilityToken(
    token,
    {
      ...approvalBinding(
        {
          fleet: ctx.fleet,
          host: stored.host,
          requestId,
          requestHash: stored.request_hash,
          nonce: stored.nonce,
          exp: stored.exp,
        },
        // The relay cannot see whether the request offered a grant; the daemon checks that.
        token.grant,
      ),
      origins: relying.origins,
      rpId: relying.rpId,
      now: ctx.now(),
    },
    credentialOfRow(device),
    // The single-use step is the request's own transition out of "pending".
    { consume: () => settle(ctx, requestId, 'approved', 'approve', device.id) },
  );
  if (!verified.ok) {
    // Whatever ended the request while the token was checked says why: a decision or a withdrawal.
    if (verified.error.code === 'already_used')
      return (
        undecidable(
          ctx,
          row<RequestRow>(ctx.sql, 'SELECT * FROM requests WHERE request_id = ?', requestId)!,
        ) ?? refusal('already_decided', 'another answer was first')
      );
    return refuseWith(verified.error);
  }
  ctx.sql.exec('UPDATE devices SET counter = ? WHERE id = ?', verified.value.counter, device.id);
  ctx.emit(stored.host, { v: PROTOCOL_VERSION, type: 'approved', requestId, token, at: ctx.now() });
  notifyClosed(ctx, stored, device.id);
  return { ok: true, value: { state: 'approved' } };
}

/** A phone's refusal, signed by its device key: no biometric, since refusing is the safe direction. */
export async function deny(
  ctx: FleetContext,
  requestId: string,
  envelope: DenyEnvelope,
): Promise<RelayResult<{ state: RequestState; reported?: true }>> {
  const { body, signer } = envelope;
  if (body.requestId !== requestId || body.fleet !== ctx.fleet || signer.role !== 'device') {
    return refusal('context_mismatch', 'the deny is for another request');
  }
  const device = activeDevice(ctx, signer.id);
  if (!device) return refusal('unknown_credential', 'no paired device has this id');
  const stored = row<RequestRow>(ctx.sql, 'SELECT * FROM requests WHERE request_id = ?', requestId);
  if (!stored || !isPairedWith(ctx, stored.host, device.id))
    return refusal('not_found', 'no such request for this phone');
  if (body.host !== stored.host) return refusal('context_mismatch', 'the deny names another host');
  const verified = await verifyEnvelope(envelope, {
    kind: 'deny',
    publicKey: fromBase64url(device.device_key),
    maxSkewMs: 60_000,
    now: ctx.now(),
  });
  if (!verified.ok) return refuseWith(verified.error);
  const current = () => row<RequestRow>(ctx.sql, 'SELECT * FROM requests WHERE request_id = ?', requestId)!;
  const notNow = undecidable(ctx, current());
  if (notNow && !body.report) return notNow;
  if (!consumeNonce(ctx, envelope.nonce)) return refusal('replayed_nonce', 'this deny was already received');
  const denied = !notNow && settle(ctx, requestId, 'denied', 'deny', device.id);
  if (!denied && !body.report) return refusal('already_decided', 'another answer was first');
  // A report ("I didn't expect this") of a request that ended meanwhile (withdrawn, decided,
  // expired) still goes to its host, which refuses the session or freezes once it has verified
  // the phone's signature: what the person did not expect is still running.
  ctx.emit(stored.host, { v: PROTOCOL_VERSION, type: 'denied', requestId, envelope, at: ctx.now() });
  if (!denied) return { ok: true, value: { state: endedState(ctx, current()), reported: true } };
  notifyClosed(ctx, stored, device.id);
  return { ok: true, value: { state: 'denied', ...(body.report ? { reported: true } : {}) } };
}

/** A request's state as a phone should read it: one past its deadline is expired. */
const endedState = (ctx: FleetContext, stored: RequestRow): RequestState =>
  stored.state === 'pending' && stored.exp <= ctx.now() ? 'expired' : (stored.state as RequestState);
