import { createHash } from 'node:crypto';
import { toBase64url } from '../../shared/encoding/base64url.ts';

/**
 * This host's own id for an agent session, in its records (a request's `conversation`, a reported
 * session, a session grant) and sealed to its phones (`similar.conversation`): a hash, never the
 * session itself. It never reaches the relay, which sees CallIds.conversation, keyed by a secret
 * of this host: unkeyed, a session a program names (`nightly`) is confirmed by a guess. Kept as
 * it was so that an upgraded daemon reads the reports and grants it made before.
 */
export const conversationId = (session: string | undefined): string =>
  session ? toBase64url(createHash('sha256').update(session).digest().subarray(0, 12)) : 'none';
