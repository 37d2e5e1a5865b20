import { createECDH } from 'node:crypto';
// http_ece is what web-push encrypts with; sendWebPush → generateRequestDetails → this encrypt.
import ece from 'http_ece';
import webpush from 'web-push';
import { describe, expect, it } from 'vitest';
import { vapidAuthorization, type VapidKeys } from '../../relay/push/sendWebPush.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { fromUtf8 } from '../../shared/encoding/bytes.ts';
import { verifyVapidHeader } from '../support/vapid.ts';
import { decryptWebPush } from '../support/webPushDecrypt.ts';

// RFC 8291, Appendix A.
const RFC8291 = {
  plaintext: 'When I grow up, I want to be a watermelon',
  asPrivate: 'yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw',
  asPublic: 'BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8',
  uaPrivate: 'q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94',
  uaPublic: 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
  authSecret: 'BTBZMqHH6r4Tts7J_aSIgg',
  salt: 'DGv6ra1nlYgDCS1FRnbzlw',
  message:
    'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
};

describe('Web Push encryption (RFC 8291) and VAPID (RFC 8292)', () => {
  it('reproduces the RFC 8291 Appendix A message through the encryption the relay uses', () => {
    // The same call web-push makes for every push, with the RFC's key and salt in place of fresh ones.
    const sender = createECDH('prime256v1');
    sender.setPrivateKey(Buffer.from(RFC8291.asPrivate, 'base64url'));
    const message = ece.encrypt(Buffer.from(RFC8291.plaintext), {
      version: 'aes128gcm',
      dh: RFC8291.uaPublic,
      privateKey: sender,
      salt: RFC8291.salt,
      authSecret: RFC8291.authSecret,
    });
    expect(message.toString('base64url')).toBe(RFC8291.message);
  });

  it('decrypts the Appendix A message in the push stand-in', async () => {
    const jwk = {
      kty: 'EC',
      crv: 'P-256',
      d: RFC8291.uaPrivate,
      x: Buffer.from(RFC8291.uaPublic, 'base64url').subarray(1, 33).toString('base64url'),
      y: Buffer.from(RFC8291.uaPublic, 'base64url').subarray(33).toString('base64url'),
    };
    const privateKey = await crypto.subtle.importKey(
      'jwk',
      jwk,
      { name: 'ECDH', namedCurve: 'P-256' },
      false,
      ['deriveBits'],
    );
    const plaintext = await decryptWebPush(fromBase64url(RFC8291.message), {
      privateKey,
      publicKeyRaw: fromBase64url(RFC8291.uaPublic),
      authSecret: fromBase64url(RFC8291.authSecret),
    });
    expect(fromUtf8(plaintext)).toBe(RFC8291.plaintext);
  });

  const keys = (): VapidKeys => ({ subject: 'mailto:ops@latch.test', ...webpush.generateVAPIDKeys() });

  it('signs a VAPID JWT whose aud is the push service origin and whose exp is at most 12 h away', async () => {
    const vapid = keys();
    const now = Date.now();
    const verified = await verifyVapidHeader(
      vapidAuthorization('https://push.example.net:8443/wpush/v2/abc?x=1', vapid, now),
    );
    expect(verified.ok).toBe(true);
    if (!verified.ok) return;
    expect(verified.key).toBe(vapid.publicKey);
    expect(verified.claims.aud).toBe('https://push.example.net:8443');
    expect(verified.claims.sub).toBe('mailto:ops@latch.test');
    expect(verified.claims.exp).toBeGreaterThan(Math.floor(now / 1000));
    expect(verified.claims.exp).toBeLessThanOrEqual(Math.floor(now / 1000) + 12 * 3600);
  });

  it("reuses a push service's JWT for an hour, then signs a fresh one; another service gets its own", async () => {
    const vapid = keys();
    const now = Date.now();
    const first = vapidAuthorization('https://push.example.net/a', vapid, now);
    expect(vapidAuthorization('https://push.example.net/b', vapid, now + 3599_000)).toBe(first);
    const renewed = vapidAuthorization('https://push.example.net/a', vapid, now + 3600_000);
    expect(renewed).not.toBe(first);
    const renewedClaims = await verifyVapidHeader(renewed);
    expect(renewedClaims.ok && renewedClaims.claims.exp).toBe(
      Math.floor((now + 3600_000) / 1000) + 12 * 3600,
    );
    const other = await verifyVapidHeader(vapidAuthorization('https://web.push.apple.com/x', vapid, now));
    expect(other.ok && other.claims.aud).toBe('https://web.push.apple.com');
    const rotated = keys();
    const afterRotation = await verifyVapidHeader(
      vapidAuthorization('https://push.example.net/a', rotated, now),
    );
    expect(afterRotation.ok && afterRotation.key).toBe(rotated.publicKey);
  });

  it('refuses a VAPID JWT signed by another key', async () => {
    const header = vapidAuthorization('https://push.example.net/x', keys(), Date.now()).replace(
      /k=.*$/,
      `k=${keys().publicKey}`,
    );
    expect(await verifyVapidHeader(header)).toEqual({ ok: false, reason: 'bad JWT signature' });
  });
});
