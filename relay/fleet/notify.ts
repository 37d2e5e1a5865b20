import { utf8Length } from '../../shared/encoding/bytes.ts';
import { MAX_PUSH_PAYLOAD_BYTES, type PushMessage } from '../../shared/messages/pushMessages.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { closesByPush } from '../push/closesByPush.ts';
import { decidePush, HOUR_MS, MINUTE_MS, pushCapsFrom } from '../push/pushCaps.ts';
import { sendWebPush, type VapidKeys } from '../push/sendWebPush.ts';
import { count, row, rows, type FleetContext } from './context.ts';

interface Recipient {
  id: string;
  push_endpoint: string;
  push_p256dh: string;
  push_auth: string;
  box: string | null;
}

export function vapidFromEnv(env: Env): VapidKeys | undefined {
  const { VAPID_PUBLIC_KEY: publicKey, VAPID_PRIVATE_KEY: privateKey, VAPID_SUBJECT: subject } = env;
  return publicKey && privateKey && subject ? { publicKey, privateKey, subject } : undefined;
}

/**
 * The push log's rows that match, counted no further than `cap`: a cap only asks whether it was
 * reached, so an agent flooding requests makes each count no dearer than its cap.
 */
function countUpTo(ctx: FleetContext, cap: number, where: string, ...bindings: unknown[]): number {
  return count(
    ctx.sql,
    `SELECT COUNT(*) AS n FROM (SELECT 1 FROM push_log WHERE ${where} LIMIT ?)`,
    ...bindings,
    cap,
  );
}

/**
 * Decides, under the caps, whether a new request is pushed, and sends it to every phone paired
 * with its host. The bookkeeping is synchronous, so concurrent requests cannot slip past a cap;
 * the sending finishes in the background.
 */
export function notifyNewRequest(
  ctx: FleetContext,
  request: { requestId: string; host: string; conversation: string },
): void {
  const vapid = vapidFromEnv(ctx.env);
  if (!vapid) return; // No VAPID keys configured: the app still lists every request.
  const now = ctx.now();
  const { host, conversation } = request;
  ctx.sql.exec('DELETE FROM push_log WHERE at <= ?', now - HOUR_MS);
  const lastSummary = row<{ at: number | null }>(
    ctx.sql,
    "SELECT MAX(at) AS at FROM push_log WHERE host = ? AND kind = 'summary'",
    host,
  );
  const caps = pushCapsFrom(ctx.env.PUSH_CAPS);
  const decision = decidePush(
    {
      lastSummaryAt: lastSummary?.at ?? undefined,
      requestsLastHour: countUpTo(
        ctx,
        caps.perHostPerHour,
        "host = ? AND kind = 'request' AND at > ?",
        host,
        now - HOUR_MS,
      ),
      hostPushesLastMinute: countUpTo(
        ctx,
        caps.perHostPerMinute,
        "host = ? AND kind = 'push' AND at > ?",
        host,
        now - MINUTE_MS,
      ),
      conversationPushesLastMinute: countUpTo(
        ctx,
        caps.perConversationPerMinute,
        "host = ? AND conversation = ? AND kind = 'push' AND at > ?",
        host,
        conversation,
        now - MINUTE_MS,
      ),
    },
    now,
    caps,
  );
  ctx.sql.exec(
    "INSERT INTO push_log (host, conversation, kind, at) VALUES (?, ?, 'request', ?)",
    host,
    conversation,
    now,
  );
  if (decision === 'silent') return;
  ctx.sql.exec(
    'INSERT INTO push_log (host, conversation, kind, at) VALUES (?, ?, ?, ?)',
    host,
    conversation,
    decision,
    now,
  );
  if (decision === 'push')
    ctx.sql.exec('UPDATE requests SET pushed = 1 WHERE request_id = ?', request.requestId);

  const recipients = rows<Recipient>(
    ctx.sql,
    `SELECT d.id, d.push_endpoint, d.push_p256dh, d.push_auth, b.box
       FROM pairings p JOIN devices d ON d.id = p.device
       LEFT JOIN sealed_boxes b ON b.request_id = ? AND b.device = d.id
      WHERE p.host = ? AND d.revoked_at IS NULL AND d.push_endpoint IS NOT NULL`,
    request.requestId,
    host,
  );
  // Counted only for a summary (at most one an hour per host): the count reads all its requests.
  const summary: PushMessage | undefined =
    decision === 'summary'
      ? {
          v: PROTOCOL_VERSION,
          type: 'summary',
          fleet: ctx.fleet,
          pending: count(
            ctx.sql,
            "SELECT COUNT(*) AS n FROM requests WHERE host = ? AND state = 'pending'",
            host,
          ),
        }
      : undefined;
  for (const recipient of recipients) {
    const message: PushMessage =
      summary ??
      withBoxIfItFits(
        { v: PROTOCOL_VERSION, type: 'request', fleet: ctx.fleet, requestId: request.requestId },
        recipient.box,
      );
    ctx.background(deliver(ctx, recipient, JSON.stringify(message), vapid));
  }
}

/**
 * Tells the phones that were shown a request's notification that it no longer waits (decided,
 * expired, withdrawn), so each closes it. Only for a request whose notification went out: at most
 * one close per notification, so the caps on notifications bound these too. The phone that
 * decided (`except`) closed its own. The message names the request and nothing else.
 */
export function notifyClosed(
  ctx: FleetContext,
  request: { request_id: string; host: string; pushed: number },
  except?: string,
): void {
  const vapid = vapidFromEnv(ctx.env);
  if (!vapid || !request.pushed) return;
  const recipients = rows<Recipient>(
    ctx.sql,
    `SELECT d.id, d.push_endpoint, d.push_p256dh, d.push_auth, NULL AS box
       FROM pairings p JOIN devices d ON d.id = p.device
      WHERE p.host = ? AND d.revoked_at IS NULL AND d.push_endpoint IS NOT NULL AND d.id != ?`,
    request.host,
    except ?? '',
  );
  const message: PushMessage = {
    v: PROTOCOL_VERSION,
    type: 'closed',
    fleet: ctx.fleet,
    requestId: request.request_id,
  };
  for (const recipient of recipients) {
    if (!closesByPush(recipient.push_endpoint)) continue;
    ctx.background(deliver(ctx, recipient, JSON.stringify(message), vapid));
  }
}

/** RFC 8291 leaves 3993 bytes: the box rides along when it fits, else the app fetches it. */
function withBoxIfItFits(
  message: Extract<PushMessage, { type: 'request' }>,
  box: string | null,
): PushMessage {
  if (!box) return message;
  const full = { ...message, box };
  return utf8Length(JSON.stringify(full)) <= MAX_PUSH_PAYLOAD_BYTES ? full : message;
}

async function deliver(
  ctx: FleetContext,
  recipient: Recipient,
  payload: string,
  vapid: VapidKeys,
): Promise<void> {
  const subscription = {
    endpoint: recipient.push_endpoint,
    keys: { p256dh: recipient.push_p256dh, auth: recipient.push_auth },
  };
  const outcome = await sendWebPush(subscription, payload, vapid);
  if (outcome === 'gone') {
    ctx.sql.exec(
      'UPDATE devices SET push_endpoint = NULL, push_p256dh = NULL, push_auth = NULL WHERE id = ? AND push_endpoint = ?',
      recipient.id,
      recipient.push_endpoint,
    );
  }
}
