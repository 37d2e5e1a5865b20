import { DurableObject } from 'cloudflare:workers';
import { Hono } from 'hono';

export class Fleet extends DurableObject<Env> {}

const app = new Hono<{ Bindings: Env }>();
app.get('/v1/health', (c) => c.json({ ok: true }));

export default app;
