import { canonicalBytes } from '../canonical/canonicalize.ts';
import { fromBase64url, toBase64url } from '../encoding/base64url.ts';
import { attempt, LatchError, type Result } from '../errors.ts';
import { requestDetailsSchema, type RequestDetails } from '../messages/approvals.ts';
import { parseJson } from '../schema/parse.ts';
import { PROTOCOL_VERSION } from '../version.ts';
import { open, seal } from './sealedBox.ts';

/** Where a box belongs. A box opened in another context fails, and the details must agree with it. */
export interface BoxContext {
  fleet: string;
  host: string;
  requestId: string;
  device: string;
}

/** The associated data of a details box: binds it to its fleet, host, request and device. */
export function associatedData(context: BoxContext): Uint8Array<ArrayBuffer> {
  const { fleet, host, requestId, device } = context;
  return canonicalBytes({ v: PROTOCOL_VERSION, purpose: 'request-details', fleet, host, requestId, device });
}

/** Seals request details for one phone; the result is the `box` of a SealedForDevice. */
export async function sealRequestDetails(
  details: RequestDetails,
  device: { id: string; ecdhKey: string },
): Promise<string> {
  const context = {
    fleet: details.fleet,
    host: details.host,
    requestId: details.requestId,
    device: device.id,
  };
  const box = await seal(canonicalBytes(details), fromBase64url(device.ecdhKey), associatedData(context));
  return toBase64url(box);
}

/** Opens and parses a phone's box: the details are checked like any untrusted message. */
export function openRequestDetails(
  box: string,
  recipient: { privateKey: CryptoKey; publicKeyRaw: Uint8Array<ArrayBuffer> },
  context: BoxContext,
): Promise<Result<RequestDetails>> {
  return attempt(async () => {
    let plaintext: Uint8Array<ArrayBuffer>;
    try {
      plaintext = await open(
        fromBase64url(box),
        recipient.privateKey,
        recipient.publicKeyRaw,
        associatedData(context),
      );
    } catch (error) {
      if (error instanceof LatchError && error.code === 'malformed_base64url') {
        throw new LatchError('decrypt_failed', 'the box is not base64url');
      }
      throw error;
    }
    const parsed = parseJson(requestDetailsSchema, plaintext);
    if (!parsed.ok) throw parsed.error;
    const details = parsed.value;
    if (
      details.fleet !== context.fleet ||
      details.host !== context.host ||
      details.requestId !== context.requestId
    ) {
      throw new LatchError('context_mismatch', 'the details are for another request');
    }
    return details;
  });
}
