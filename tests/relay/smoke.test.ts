import { SELF } from 'cloudflare:test';
import { inject, it, expect } from 'vitest';
it('works', async () => {
  const r = await SELF.fetch('https://latch.test/v1/config');
  expect(r.status).toBe(200);
  const u = inject('pushServiceUrl');
  const p = await fetch(`${u}/subscriptions`, { method: 'POST' });
  expect(p.status).toBe(201);
});
