import type { RequestDetails } from '../../shared/messages/approvals.ts';

/** Put before the agent's own description wherever it shows: its words, not Latch's. */
export const AGENT_SAYS = 'The agent says: ';

/** Where a request comes from, after what it does: "project · session · host". */
export const cardContext = (details: RequestDetails): string =>
  [details.project, details.session, details.hostName].filter(Boolean).join(' · ');

/**
 * A request's notification: the command or action first, then where it comes from. With
 * lock-screen privacy on, only the host: a locked phone shows notifications to anyone nearby.
 */
export function notificationText(
  details: RequestDetails,
  lockScreenPrivacy: boolean,
): { title: string; body: string } {
  if (lockScreenPrivacy) return { title: `Approval needed on ${details.hostName}`, body: '' };
  return { title: details.title, body: cardContext(details) };
}
