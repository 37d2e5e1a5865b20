import { canonicalHash } from '../canonical/canonicalize.ts';
import { PROTOCOL_VERSION } from '../version.ts';

/**
 * The WebAuthn challenge of a vote to resume: bound to the fleet and to the freeze epoch, so a
 * vote captured in one freeze is worth nothing in the next. `purpose` keeps it apart from any
 * approval challenge, whose members differ.
 */
export function resumeChallenge(binding: { fleet: string; epoch: number }): Promise<Uint8Array<ArrayBuffer>> {
  return canonicalHash({
    v: PROTOCOL_VERSION,
    purpose: 'resume',
    fleet: binding.fleet,
    epoch: binding.epoch,
  });
}
