import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../shared/schema/parse.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { SELF } from 'cloudflare:test';
import { call, fleetForTheseTests, ORIGIN } from './harness.ts';

const { path } = fleetForTheseTests();

describe('every body', () => {
  const bodyRoutes = [
    '/pairing',
    '/pairing/o1/complete',
    '/pairing/o1/confirm',
    '/requests',
    '/requests/r1/decision',
    '/requests/r1/deny',
    '/freeze',
    '/resume',
  ];

  it.each(bodyRoutes)('refuses an oversized body on %s with 413', async (route) => {
    expectRefusedReply(
      await call('POST', path(route), { body: `{"v":1,"x":"${'a'.repeat(MAX_BODY_BYTES)}"}` }),
      413,
      'body_too_large',
    );
  });

  it('refuses a body from its declared length, before any of it arrives', async () => {
    // A stream that never ends: only the Content-Length check can answer.
    const neverEnds = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new Uint8Array([123])),
    });
    const reply = await SELF.fetch(`${ORIGIN}${path('/requests')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY_BYTES + 1) },
      body: neverEnds,
    });
    expect(reply.status).toBe(413);
    expect(await reply.json()).toMatchObject({ error: { code: 'body_too_large' } });
  });

  it.each(bodyRoutes)('refuses malformed JSON on %s with 400', async (route) => {
    expectRefusedReply(await call('POST', path(route), { body: '{"v":1,' }), 400, 'malformed_json');
  });

  it.each(bodyRoutes)('refuses an unknown version on %s with 400', async (route) => {
    expectRefusedReply(await call('POST', path(route), { json: { v: 2 } }), 400, 'unknown_version');
  });

  it.each(bodyRoutes)('refuses a body that is not JSON on %s with 415', async (route) => {
    // A type of its own that only starts like JSON's is another type.
    for (const type of [
      'application/x-www-form-urlencoded',
      'application/json-patch+json',
      'application/jsonx',
    ])
      expectRefusedReply(
        await call('POST', path(route), { body: '{"v":1}', headers: { 'content-type': type } }),
        415,
        'unsupported_media_type',
      );
  });

  it('takes JSON with parameters', async () => {
    expectRefusedReply(
      await call('POST', path('/freeze'), {
        body: '{"v":1,',
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }),
      400,
      'malformed_json',
    );
  });

  it('answers any garbage on any route with a 4xx, never a 5xx', async () => {
    const routes = [
      ...bodyRoutes.map((route) => ['POST', route] as const),
      ['GET', '/requests'] as const,
      ['GET', '/state'] as const,
      ['PATCH', '/devices/d1'] as const,
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc.string(),
        ),
        async ([method, route], body) => {
          const reply = await call(
            method,
            path(route),
            method === 'GET'
              ? { headers: { 'latch-device': encodeURIComponent(body).slice(0, 200) || 'x' } }
              : { body },
          );
          expect(reply.status).toBeGreaterThanOrEqual(400);
          expect(reply.status).toBeLessThan(500);
          expect(reply.body).toMatchObject({ error: { code: expect.any(String) } });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a fleet id that is not an id', async () => {
    expectRefusedReply(await call('GET', '/v1/fleets/a%20b/state'), 400, 'invalid_id');
  });

  it('refuses path ids no decoder reads, or that two spellings would name, before any object is made', async () => {
    // `%ZZ` is left as it is by the router, and `%25ZZ` decodes to the same letters.
    for (const url of ['/v1/fleets/%ZZ/state', '/v1/fleets/%25ZZ/state', '/v1/fleets/%ED%A0%80/members'])
      expectRefusedReply(await call('GET', url), 400, 'invalid_id');
    expectRefusedReply(await call('GET', path('/requests/%ZZ')), 400, 'invalid_id');
    expectRefusedReply(await call('GET', '/v1/pairing/%ZZ'), 400, 'invalid_id');
  });

  it('answers an unknown route with a JSON 404', async () => {
    expectRefusedReply(await call('GET', '/v1/nothing-here'), 404, 'not_found');
  });
});
