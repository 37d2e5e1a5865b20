// Secrets and variables the relay reads besides its bindings (see wrangler.toml, docs/deploy.md).
declare namespace Cloudflare {
  interface Env {
    /** VAPID keys (RFC 8292), base64url, as web-push generates them. Without them, no pushes. */
    VAPID_PUBLIC_KEY?: string;
    VAPID_PRIVATE_KEY?: string;
    /** A mailto: or https: contact for push services; Apple refuses a placeholder. */
    VAPID_SUBJECT?: string;
    /** Push caps "per conversation a minute,per host a minute,per host an hour" (default 3,10,30). */
    PUSH_CAPS?: string;
    /**
     * Hosts besides the browsers' push services that push endpoints may name, comma-separated
     * (relay/push/pushServices.ts): local runs set the loopback push stand-in's.
     */
    PUSH_SERVICE_HOSTS?: string;
    /** "on" serves the billable-event meter at GET /v1/meter (benchmarks; docs/relay.md). */
    BILLABLE_METER?: string;
  }
}
