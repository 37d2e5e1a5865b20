import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Past this, an answer from the relay is refused unread: a hostile relay cannot fill memory. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

export class AnswerTooLargeError extends Error {}

/** The relay had not answered in full by the call's deadline. */
export class NoAnswerInTimeError extends Error {}

// One kept-alive connection pool per protocol: a request to the relay skips the handshake.
// node:http, not fetch: fetch made the daemon's memory grow by ~90 KB per call until a full GC.
const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

/**
 * One HTTP call; resolves with the status and the body as text, rejects if the relay is out of
 * reach or has not answered in full within `timeoutMs` (a deadline for the whole call: a relay
 * that trickles its answer a byte at a time is out of reach too).
 */
export function httpCall(
  url: URL,
  options: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<{ status: number; text: string }> {
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
  const send = protocol === 'https:' ? httpsRequest : httpRequest;
  const headers = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  let deadline: NodeJS.Timeout | undefined;
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = send(url, { method: options.method, headers, agent: agents[protocol] }, (response) =>
      readAnswer(response).then((text) => resolve({ status: response.statusCode ?? 0, text }), reject),
    );
    deadline = setTimeout(() => {
      const late = new NoAnswerInTimeError(`no answer within ${options.timeoutMs / 1000} s`);
      reject(late);
      request.destroy(late);
    }, options.timeoutMs);
    request.on('error', reject);
    request.end(options.body);
  }).finally(() => clearTimeout(deadline));
}

function readAnswer(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        response.destroy();
        reject(new AnswerTooLargeError(`the relay's answer is over ${MAX_ANSWER_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}
