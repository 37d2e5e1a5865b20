import type { StateStore } from '../state/stateStore.ts';

/** Why an id cannot be added here: `latch pair` and `POST /v1/enrol` answer with it. */
export interface PairedBefore {
  code: 'already_paired' | 'revoked_here';
  message: string;
}

/**
 * A phone id this host has stored is never added again. One paired here: adding writes every key
 * under its id, so an enrolment with a paired phone's id (and its public device key) but keys of
 * its own would silently take that phone's place, sealed details and approvals with it. One
 * revoked here: a revoke made in the app names only the fleet and the id and never expires
 * (shared/device-auth/revokeChallenge), so a relay that kept it could end the phone again at a
 * moment of its choosing, a freeze's, say, leaving the host below its quorum.
 */
export function pairedBefore(store: StateStore, device: string): PairedBefore | undefined {
  const stored = store.devices({ includeRevoked: true }).find(({ id }) => id === device);
  if (!stored) return undefined;
  const phone = `${stored.name} (${device})`;
  return stored.revoked
    ? {
        code: 'revoked_here',
        message: `${phone} was revoked on this host, and a revoked phone never pairs here again: pair it as a new phone (clear the app's data, which gives it new keys), or start this host anew (latch init --reset)`,
      }
    : {
        code: 'already_paired',
        message: `${phone} is already paired with this host; to pair it anew, revoke it (latch devices --revoke ${device}) and pair it as a new phone (clear the app's data, which gives it new keys)`,
      };
}
