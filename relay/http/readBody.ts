import { concatBytes } from '../../shared/encoding/bytes.ts';
import { MAX_BODY_BYTES } from '../../shared/schema/parse.ts';

/**
 * Reads a request body, refusing one over `maxBytes` as soon as it is known to be: from
 * Content-Length when given, else while streaming, so an oversized body is never buffered whole.
 * A body its sender stopped sending part-way (the connection lost) is `cut`: the client's
 * fault, not the relay's.
 */
export async function readBody(
  request: Request,
  maxBytes: number = MAX_BODY_BYTES,
): Promise<Uint8Array<ArrayBuffer> | 'too_large' | 'cut'> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) return 'too_large';
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const read = await reader.read().catch(() => undefined);
    if (!read) return 'cut';
    const { done, value } = read;
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel();
      return 'too_large';
    }
    chunks.push(value);
  }
  return concatBytes(...chunks);
}
