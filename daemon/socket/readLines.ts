import type { Readable } from 'node:stream';

/** Past this, a line is not one the other side meant to send: the stream is cut. */
const MAX_LINE_BYTES = 1024 * 1024;

/**
 * NDJSON from the other end of the daemon's socket: `onLine` with each whole line, `onEnd` when
 * the stream ends, breaks, is cut or sends a line too long to be one (it may hear more than one
 * of those; callers settle once).
 */
export function readLines(
  stream: Readable,
  onLine: (line: string) => void,
  onEnd: () => void,
  maxLineBytes = MAX_LINE_BYTES,
): void {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line) onLine(line);
    }
    if (buffer.length > maxLineBytes) stream.destroy();
  });
  stream.on('end', onEnd);
  // An HTTP response that was cut says so with 'aborted'.
  stream.on('aborted', onEnd);
  stream.on('error', onEnd);
  stream.on('close', onEnd);
}
