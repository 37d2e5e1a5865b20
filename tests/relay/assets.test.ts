import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ORIGIN } from './harness.ts';

describe('the PWA as static assets', () => {
  it.each(['/', '/pair', '/requests/abc'])(
    'serves %s as the app with a strict CSP and no caching of index.html',
    async (path) => {
      const response = await SELF.fetch(`${ORIGIN}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      await response.body?.cancel();
    },
  );

  it.each(['/', '/sw.js', '/v1/config', '/v1/unknown'])(
    'tells browsers to reach %s over https only, and says nothing of it over http',
    async (path) => {
      const secure = await SELF.fetch(`https://relay.example${path}`);
      expect(secure.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      await secure.body?.cancel();
      const plain = await SELF.fetch(`http://127.0.0.1:8787${path}`);
      expect(plain.headers.get('strict-transport-security')).toBeNull();
      await plain.body?.cancel();
    },
  );

  it.each(['/v1/config', '/v1/unknown', '/v1/pairing/AAAAAAAAAAAAAAAAAAAAAA'])(
    'tells browsers and proxies to keep no copy of the answer to %s',
    async (path) => {
      // A phone keeps what it needs (sealed, in its own store); an HTTP cache would keep it
      // unasked, and could hand a stale answer back as the relay's.
      const response = await SELF.fetch(`${ORIGIN}${path}`);
      expect(response.headers.get('cache-control')).toBe('no-store');
      await response.body?.cancel();
    },
  );

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])(
    'refuses %s of the app as 405 method_not_allowed',
    async (method) => {
      const response = await SELF.fetch(`${ORIGIN}/`, { method, body: 'x'.repeat(100_000) });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(await response.json()).toEqual({
        error: { code: 'method_not_allowed', message: "the app's files are only read" },
      });
    },
  );

  it('never answers an API path with the app', async () => {
    const response = await SELF.fetch(`${ORIGIN}/v1/unknown`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    await response.body?.cancel();
  });
});
