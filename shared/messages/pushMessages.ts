import { f, type Infer } from '../schema/index.ts';
import { LIMITS } from './limits.ts';

/** RFC 8291 leaves 3993 bytes of plaintext in a 4096-byte push message. */
export const MAX_PUSH_PAYLOAD_BYTES = 3993;

/**
 * Relay → phone, inside an encrypted Web Push message. A request push carries the request's
 * sealed box when it fits, so the notification can show the command; otherwise the id alone, and
 * the app fetches. A closed push withdraws the notification of a request that no longer waits.
 */
export const pushMessageSchema = /* @__PURE__ */ f.variant('type', {
  request: f.object({
    v: f.version(),
    type: f.literal('request'),
    fleet: f.id(),
    requestId: f.id(),
    box: f.optional(f.base64url(1, LIMITS.sealedBoxBytes)),
  }),
  summary: f.object({
    v: f.version(),
    type: f.literal('summary'),
    fleet: f.id(),
    pending: f.integer(0, Number.MAX_SAFE_INTEGER),
  }),
  /**
   * The request was decided on another phone, expired or was withdrawn: the phone closes its
   * notification. It names the request and nothing else, not even how it ended.
   */
  closed: f.object({
    v: f.version(),
    type: f.literal('closed'),
    fleet: f.id(),
    requestId: f.id(),
  }),
});
export type PushMessage = Infer<typeof pushMessageSchema>;
