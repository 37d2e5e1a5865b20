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
  ])('never takes %s for a refusal: it gives the fallback', (_what, body) => {
    expect(refusalInBody(body, otherwise)).toEqual(otherwise);
  });
});
