import { describe, expect, it } from 'vitest';
import { enrolmentChange, enrolmentFingerprint, type Enrolment } from '../../daemon/pairing/enrolment.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';

const totp = (fill: number): Enrolment => ({
  kind: 'totp',
  secret: toBase64url(new Uint8Array(20).fill(fill)),
});

describe('what a phone is asked when latch pair --totp enrols an authenticator', () => {
  it('leads with the key latch pair --totp prints, so that a secret of another process’s reads as another', () => {
    const mine = enrolmentChange(totp(1), 'build-box');
    const theirs = enrolmentChange(totp(2), 'build-box');
    expect(mine.detail.split('\n')[0]).toBe(`key ${enrolmentFingerprint(totp(1))}`);
    expect(enrolmentFingerprint(totp(1))).toMatch(/^[0-9a-f]{4} [0-9a-f]{4} [0-9a-f]{4}$/);
    expect(enrolmentFingerprint(totp(1))).not.toBe(enrolmentFingerprint(totp(2)));
    expect(mine.detail).toContain('Approve only if latch pair --totp shows the same key');
    // Each secret is a request of its own: an approval of one never enrols the other.
    expect(mine.key).not.toBe(theirs.key);
  });
});
