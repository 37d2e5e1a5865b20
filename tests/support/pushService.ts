import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { fromUtf8, randomBytes } from '../../shared/encoding/bytes.ts';
import { exportPublicKey, generateEcdhKeyPair } from '../../shared/keys/p256.ts';
import type { ReceivedPush } from './pushServiceClient.ts';
import { verifyVapidHeader } from './vapid.ts';
import { decryptWebPush, type UserAgentKeys } from './webPushDecrypt.ts';

interface Subscription extends UserAgentKeys {
  gone: boolean;
}

/**
 * A local stand-in for a Web Push service (Apple's, Google's, Mozilla's cannot be reached here).
 * It speaks the real protocol: it refuses a push whose VAPID JWT (RFC 8292) does not verify or
 * whose claims are wrong, decrypts the RFC 8291 payload with the subscription's private key, and
 * answers 410 for a subscription marked gone.
 *
 *   POST /subscriptions                → { endpoint, keys: { p256dh, auth }, id }
 *   POST /push/:id                     ← what a relay sends
 *   POST /subscriptions/:id/gone       → later pushes get 410
 *   GET  /subscriptions/:id/messages   → ReceivedPush[]
 *   GET  /rejected                     → why pushes were refused
 */
export async function startPushService(): Promise<{ url: string; close(): Promise<void> }> {
  const subscriptions = new Map<string, Subscription>();
  const received = new Map<string, ReceivedPush[]>();
  const rejected: string[] = [];
  let origin = '';

  async function readAll(request: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return new Uint8Array(Buffer.concat(chunks));
  }

  const json = (response: ServerResponse, status: number, value: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };

  async function receive(id: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    // Stamped on arrival, before the checks below spend the stand-in's own time.
    const receivedAt = performance.timeOrigin + performance.now();
    const subscription = subscriptions.get(id);
    if (!subscription) return json(response, 404, { reason: 'no such subscription' });
    if (subscription.gone) return json(response, 410, { reason: 'unsubscribed' });
    const refuse = (reason: string) => {
      rejected.push(reason);
      json(response, 403, { reason });
    };
    const vapid = await verifyVapidHeader(request.headers.authorization ?? null);
    if (!vapid.ok) return refuse(vapid.reason);
    const nowSeconds = Math.floor(Date.now() / 1000);
    if (vapid.claims.aud !== origin) return refuse(`aud ${vapid.claims.aud} is not ${origin}`);
    if (!(vapid.claims.exp > nowSeconds && vapid.claims.exp <= nowSeconds + 12 * 3600 + 5))
      return refuse('exp is not within 12 h');
    if (!/^(mailto:|https:)/.test(vapid.claims.sub)) return refuse('sub is not mailto: or https:');
    if (request.headers['content-encoding'] !== 'aes128gcm') return refuse('not aes128gcm');
    let plaintext: Uint8Array<ArrayBuffer>;
    try {
      plaintext = await decryptWebPush(await readAll(request), subscription);
    } catch (error) {
      return refuse(`payload does not decrypt: ${(error as Error).message}`);
    }
    const list = received.get(id) ?? [];
    list.push({
      subscription: id,
      payload: fromUtf8(plaintext),
      receivedAt,
      claims: vapid.claims,
      ttl: (request.headers['ttl'] as string | undefined) ?? null,
      urgency: (request.headers['urgency'] as string | undefined) ?? null,
    });
    received.set(id, list);
    response.writeHead(201).end();
  }

  async function subscribe(response: ServerResponse): Promise<void> {
    const id = toBase64url(randomBytes(12));
    const keys = await generateEcdhKeyPair(false);
    const subscription = {
      privateKey: keys.privateKey,
      publicKeyRaw: await exportPublicKey(keys.publicKey),
      authSecret: randomBytes(16),
      gone: false,
    };
    subscriptions.set(id, subscription);
    json(response, 201, {
      id,
      endpoint: `${origin}/push/${id}`,
      keys: { p256dh: toBase64url(subscription.publicKeyRaw), auth: toBase64url(subscription.authSecret) },
    });
  }

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', origin).pathname;
    const parts = path.split('/').filter(Boolean);
    const handled = (async () => {
      if (request.method === 'POST' && path === '/subscriptions') return subscribe(response);
      if (request.method === 'POST' && parts[0] === 'push' && parts[1])
        return receive(parts[1], request, response);
      if (request.method === 'POST' && parts[0] === 'subscriptions' && parts[2] === 'gone') {
        const subscription = subscriptions.get(parts[1] ?? '');
        if (subscription) subscription.gone = true;
        return json(response, subscription ? 200 : 404, {});
      }
      if (request.method === 'GET' && parts[0] === 'subscriptions' && parts[2] === 'messages') {
        return json(response, 200, received.get(parts[1] ?? '') ?? []);
      }
      if (request.method === 'GET' && path === '/rejected') return json(response, 200, rejected);
      json(response, 404, { reason: 'no such route' });
    })();
    handled.catch((error: unknown) => json(response, 500, { reason: (error as Error).message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
