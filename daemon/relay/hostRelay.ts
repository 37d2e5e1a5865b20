import { existsSync } from 'node:fs';
import { readRegularFile } from '../config/readRegularFile.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import type { LatchConfig } from '../config/config.ts';
import type { LatchFiles } from '../config/paths.ts';
import { RelayClient } from './relayClient.ts';

/** Who a phone's WebAuthn assertions are for: the relay's origin, and its host name as the RP id. */
export function relyingPartyOf(config: LatchConfig): RelyingParty {
  return { origins: [config.relay.url], rpId: new URL(config.relay.url).hostname };
}

/**
 * This host's client of its fleet's relay. The host token is read at each call: `latch pair`
 * writes it while the daemon runs.
 */
export function relayClientFor(files: LatchFiles, config: LatchConfig): RelayClient {
  // A link in the token's place is not this host's token: the relay is asked without one, and refuses.
  const readToken = () => {
    if (!existsSync(files.hostToken)) return undefined;
    const read = readRegularFile(files.hostToken, { followLinks: false });
    return read.ok ? read.text.trim() : undefined;
  };
  return new RelayClient(config.relay.url, config.host.fleet, readToken);
}
