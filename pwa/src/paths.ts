/** The app route of one request (used by the page and by the service worker's notifications). */
export function requestPath(fleet: string, requestId: string): string {
  return `/requests/${encodeURIComponent(fleet)}/${encodeURIComponent(requestId)}`;
}
