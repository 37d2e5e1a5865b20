/** The push services browsers subscribe with: Chrome, Edge and Android (FCM), Firefox, Safari, Windows. */
const BROWSER_PUSH_SERVICES = [
  'fcm.googleapis.com',
  'push.services.mozilla.com',
  'push.apple.com',
  'notify.windows.com',
];

/**
 * Whether the relay may send pushes to `endpoint`: a browser's push service over https on its
 * own port, or a host the operator names in PUSH_SERVICE_HOSTS (local runs name the loopback push
 * stand-in). Any other address would make the relay POST, once per phone of a fleet anyone can
 * make, wherever a stranger says.
 */
export function isPushService(endpoint: string, env: Env): boolean {
  const url = new URL(endpoint);
  const named = (env.PUSH_SERVICE_HOSTS ?? '').split(',').map((host) => host.trim());
  if (named.includes(url.hostname)) return true;
  return (
    url.protocol === 'https:' &&
    url.port === '' &&
    BROWSER_PUSH_SERVICES.some((service) => url.hostname === service || url.hostname.endsWith(`.${service}`))
  );
}
