import { deny, listRequests } from './actions.ts';
import type { DeviceIdentity } from './keystore.ts';
import type { ApiResult } from './relayApi.ts';

/**
 * "Deny all waiting from this session": every pending request of one agent session (its
 * conversation id) on one host, each with its own signed deny, one by one. Returns how many the
 * relay took; one another phone answered first is not counted.
 */
export async function denyConversation(
  identity: DeviceIdentity,
  fleet: string,
  which: { host: string; conversation: string },
): Promise<ApiResult<number>> {
  const listed = await listRequests(identity, fleet, 'pending');
  if (!listed.ok) return listed;
  let denied = 0;
  for (const request of listed.value.requests) {
    if (request.host !== which.host || request.conversation !== which.conversation) continue;
    if ((await deny(identity, fleet, request.host, request.requestId)).ok) denied++;
  }
  return { ok: true, value: denied };
}
