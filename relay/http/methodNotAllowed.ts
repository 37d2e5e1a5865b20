import type { Hono } from 'hono';
import { refusal, refusalResponse } from './relayError.ts';

/** A `405 method_not_allowed` that names, in `Allow`, the methods the resource has. */
export function methodNotAllowed(allowed: readonly string[], message: string): Response {
  const refused = refusalResponse(refusal('method_not_allowed', message));
  refused.headers.set('allow', allowed.join(', '));
  return refused;
}

/**
 * Gives every route of `routes` whose path passes `include` a 405 for the methods it lacks, in
 * place of the 404 that would say it is not there. Call it once the routes are all added: the
 * methods each path allows are read from them, so the two cannot drift apart. Hono answers a
 * HEAD with the GET route, so a path with GET allows HEAD too.
 */
export function refuseOtherMethods<E extends object>(
  routes: Hono<E>,
  include: (path: string) => boolean,
): void {
  const methodsByPath = new Map<string, Set<string>>();
  for (const { method, path } of routes.routes) {
    // Middleware (`use`) is registered for every method; it is no route of its own.
    if (method === 'ALL' || !include(path)) continue;
    const methods = methodsByPath.get(path) ?? new Set<string>();
    methods.add(method);
    if (method === 'GET') methods.add('HEAD');
    methodsByPath.set(path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    const allowed = [...methods];
    routes.all(path, () => methodNotAllowed(allowed, `this route takes ${allowed.join(', ')}`));
  }
}
