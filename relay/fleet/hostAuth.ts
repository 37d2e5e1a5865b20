import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes, sha256, utf8 } from '../../shared/encoding/bytes.ts';
import { refusal, type RelayResult } from '../http/relayError.ts';
import { row, type FleetContext, type HostRow } from './context.ts';

/** A new bearer token for a host: 256 random bits. Only its hash is ever stored. */
export function mintHostToken(): string {
  return toBase64url(randomBytes(32));
}

export async function tokenHash(token: string): Promise<string> {
  return toBase64url(await sha256(utf8(token)));
}

/** A host's token from an `Authorization` header: `Bearer` and the token, nothing else. */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  return authorization?.match(/^Bearer ([A-Za-z0-9_-]{1,128})$/)?.[1];
}

/**
 * Finds the host a bearer token belongs to. A host that presents its "next" token (minted by a
 * rotation) completes the rotation: the next token becomes the only one, and the connections the
 * old one opened are closed (whoever else held it kept the host's events otherwise).
 */
export async function authenticateHost(
  ctx: FleetContext,
  token: string | undefined,
): Promise<RelayResult<HostRow>> {
  if (!token) return refusal('unauthorized', 'a host bearer token is required');
  const hash = await tokenHash(token);
  const host = row<HostRow>(
    ctx.sql,
    'SELECT * FROM hosts WHERE token_hash = ? OR next_token_hash = ?',
    hash,
    hash,
  );
  if (!host) return refusal('unauthorized', 'the host token is not valid for this fleet');
  if (host.next_token_hash === hash) {
    ctx.sql.exec('UPDATE hosts SET token_hash = ?, next_token_hash = NULL WHERE id = ?', hash, host.id);
    ctx.closeConnections(host.token_hash);
    return { ok: true, value: { ...host, token_hash: hash, next_token_hash: null } };
  }
  return { ok: true, value: host };
}

/** Starts a rotation: the old token keeps working until the host first uses the new one. */
export async function rotateHostToken(ctx: FleetContext, host: HostRow): Promise<string> {
  const next = mintHostToken();
  ctx.sql.exec('UPDATE hosts SET next_token_hash = ? WHERE id = ?', await tokenHash(next), host.id);
  return next;
}
