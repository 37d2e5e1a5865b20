import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ORIGIN } from './harness.ts';

const fleet = 'fleet-wrong-method';

async function ask(method: string, path: string): Promise<Response> {
  return SELF.fetch(`${ORIGIN}${path}`, {
    method,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: '{}' }),
  });
}

describe('a route asked with a method it does not take', () => {
  it.each([
    ['PUT', `/v1/fleets/${fleet}/requests`, 'POST, GET, HEAD'],
    ['DELETE', `/v1/fleets/${fleet}/state`, 'GET, HEAD'],
    ['GET', `/v1/fleets/${fleet}/freeze`, 'POST'],
    ['HEAD', `/v1/fleets/${fleet}/resume`, 'POST'],
    ['POST', `/v1/fleets/${fleet}/devices/d1`, 'PATCH, DELETE'],
    ['POST', `/v1/fleets/${fleet}/push`, 'PUT'],
    ['GET', `/v1/fleets/${fleet}/requests/r1/decision`, 'POST'],
    ['POST', '/v1/config', 'GET, HEAD'],
    ['DELETE', '/v1/pairing/offer-1', 'GET, HEAD'],
  ])('%s %s is 405 method_not_allowed, naming %s', async (method, path, allowed) => {
    const response = await ask(method, path);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allowed);
    if (method === 'HEAD') return;
    expect(await response.json()).toEqual({
      error: { code: 'method_not_allowed', message: `this route takes ${allowed}` },
    });
  });

  it('is still checked for its fleet id first, and a path no route has is still 404', async () => {
    const badFleet = await ask('PUT', '/v1/fleets/a%20b/requests');
    expect(badFleet.status).toBe(400);
    expect(await badFleet.json()).toMatchObject({ error: { code: 'invalid_id' } });
    for (const method of ['GET', 'POST', 'PUT']) {
      const nowhere = await ask(method, `/v1/fleets/${fleet}/nothing-here`);
      expect(nowhere.status).toBe(404);
      expect(await nowhere.json()).toMatchObject({ error: { code: 'not_found' } });
    }
  });

  it('leaves the benchmarks’ meter out: only a GET reads it', async () => {
    const meter = await ask('POST', '/v1/meter');
    expect(meter.status).toBe(404);
    await meter.body?.cancel();
  });
});
