/**
 * Headers for the PWA's files. The CSP allows no inline script and no other origin, so text from
 * an agent can never run as code even if it reached the DOM as markup.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/** Files whose name carries a content hash can be cached forever; the rest must be revalidated. */
const HASHED_ASSET = /^\/assets\/.+-[A-Za-z0-9_-]{8,}\.(js|css|png|svg|woff2)$/;

export function withSecurityHeaders(response: Response, pathname: string): Response {
  const secured = new Response(response.body, response);
  const headers = secured.headers;
  headers.set('content-security-policy', CONTENT_SECURITY_POLICY);
  headers.set('x-content-type-options', 'nosniff');
  headers.set('referrer-policy', 'no-referrer');
  headers.set('cross-origin-opener-policy', 'same-origin');
  headers.set('permissions-policy', 'camera=(self), microphone=(), geolocation=()');
  if (pathname === '/sw.js') {
    // The service worker controls the whole app, and an update must be seen at once.
    headers.set('service-worker-allowed', '/');
    headers.set('cache-control', 'no-cache');
  } else if (HASHED_ASSET.test(pathname)) {
    headers.set('cache-control', 'public, max-age=31536000, immutable');
  } else {
    // index.html (and every app route that falls back to it), the manifest, icons.
    headers.set('cache-control', 'no-cache');
  }
  return secured;
}
