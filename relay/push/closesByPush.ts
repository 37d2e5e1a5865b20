/**
 * Whether a phone behind this push endpoint is told, by a push, to close a notification.
 *
 * Not Apple's push service (iOS and macOS Safari): WebKit has no silent pushes (userVisibleOnly
 * is required) and ends a subscription whose pushes show no notification, after about three. A
 * close push shows nothing, so iPhones are never sent one: the app closes their stale
 * notifications when it next lists requests, and a tap on one opens the request, which says it no
 * longer waits. Chrome and Firefox tolerate a close now and then (Chrome draws it from a silent-
 * push budget), and there is at most one per notification shown.
 */
export function closesByPush(endpoint: string): boolean {
  let host: string;
  try {
    host = new URL(endpoint).hostname;
  } catch {
    return false;
  }
  return !(host === 'push.apple.com' || host.endsWith('.push.apple.com'));
}
