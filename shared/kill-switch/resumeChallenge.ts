import { canonicalHash } from '../canonical/canonicalize.ts';
import { PROTOCOL_VERSION } from '../version.ts';

/**
 * The WebAuthn challenge of a vote to resume: bound to the fleet and to the id of the freeze it
 * ends (kill-switch/freezeId), so a vote is worth something for that one freeze and nothing in
 * the next, whatever epoch the relay announces. `purpose` keeps it apart from any approval
 * challenge, whose members differ.
 */
export function resumeChallenge(binding: {
  fleet: string;
  freeze: string;
}): Promise<Uint8Array<ArrayBuffer>> {
  return canonicalHash({
    v: PROTOCOL_VERSION,
    purpose: 'resume',
    fleet: binding.fleet,
    freeze: binding.freeze,
  });
}
