import { createHash } from 'node:crypto';
import { toBase64url } from '../../shared/encoding/base64url.ts';

/** The id the relay sees for an agent session: a hash, never the session itself. */
export const conversationId = (session: string | undefined): string =>
  session ? toBase64url(createHash('sha256').update(session).digest().subarray(0, 12)) : 'none';
