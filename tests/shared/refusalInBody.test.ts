import { describe, expect, it } from 'vitest';
import { refusalInBody } from '../../shared/errors.ts';

const otherwise = { code: 'http_error', message: 'the relay answered 502' };

describe('refusalInBody', () => {
  it('reads the code and message of an error answer', () => {
    const body = JSON.stringify({ error: { code: 'already_decided', message: 'decided on another phone' } });
    expect(refusalInBody(body, otherwise)).toEqual({
      code: 'already_decided',
      message: 'decided on another phone',
    });
  });

  it.each([
    ['a proxy’s HTML page', '<html><body>Bad gateway</body></html>'],
    ['a cut answer', '{"error":{"code":"expi'],
    ['a body without an error', '{"ok":true}'],
    ['an error without a code', '{"error":{"message":"no code"}}'],
    ['a code that is not text', '{"error":{"code":7,"message":"seven"}}'],
    ['JSON null', 'null'],
    ['a code with a terminal escape', '{"error":{"code":"expired\\u001b[2J","message":"m"}}'],
    ['a code that is a sentence', '{"error":{"code":"Approved by the relay","message":"m"}}'],
    ['a code over 64 characters', `{"error":{"code":"${'a'.repeat(65)}","message":"m"}}`],
  ])('never takes %s for a refusal: it gives the fallback', (_what, body) => {
    expect(refusalInBody(body, otherwise)).toEqual(otherwise);
  });

  it('cleans the message of terminal escapes and newlines, and caps it at 512 bytes', () => {
    const message = `\u001b]0;owned\u0007denied\r\nlatch: approved\u202e${'x'.repeat(10_000)}`;
    const refused = refusalInBody(JSON.stringify({ error: { code: 'expired', message } }), otherwise);
    expect(refused.code).toBe('expired');
    expect(refused.message).toMatch(/^\]0;owneddenied  latch: approvedx+…$/);
    expect(Buffer.byteLength(refused.message)).toBeLessThanOrEqual(512);
  });
});
