import { Hono } from 'hono';

/**
 * The relay-throughput baseline: the same two calls (create, decide) on Hono in the same runtime,
 * with an in-memory map and no checks, so the relay's figure shows what its storage, parsing and
 * verification cost on top of the framework.
 */
const requests = new Map<string, 'pending' | 'approved'>();
const app = new Hono();
app.get('/', (c) => c.text('baseline'));
app.post('/v1/requests', async (c) => {
  const { requestId } = await c.req.json<{ requestId: string }>();
  requests.set(requestId, 'pending');
  return c.json({ requestId }, 201);
});
app.post('/v1/requests/:id/decision', (c) => {
  const id = c.req.param('id');
  if (requests.get(id) !== 'pending') return c.json({ error: 'already_decided' }, 409);
  requests.set(id, 'approved');
  return c.json({ state: 'approved' });
});
export default app;
