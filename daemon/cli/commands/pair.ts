import { constants as osConstants } from 'node:os';
import { toBase64url } from '../../../shared/encoding/base64url.ts';
import { randomBytes } from '../../../shared/encoding/bytes.ts';
import { signEnvelope } from '../../../shared/envelopes/signEnvelope.ts';
import type { PairingOffer } from '../../../shared/messages/pairing.ts';
import { pairingLink } from '../../../shared/pairing/pairingLink.ts';
import { derivePairingKeys, PAIRING_SECRET_BYTES } from '../../../shared/pairing/pairingKeys.ts';
import { offerMac, shortCode } from '../../../shared/pairing/pairingTranscript.ts';
import { verifyPairingCompletion } from '../../../shared/pairing/verifyPairingCompletion.ts';
import { PROTOCOL_VERSION } from '../../../shared/version.ts';
import type { RelyingParty } from '../../../shared/webauthn/verifyAssertion.ts';
import { newTotpSecret, totpUri } from '../../fallback/totp.ts';
import type { LatchConfig } from '../../config/config.ts';
import { shownHostName } from '../../config/hostName.ts';
import { writeOwnerOnlyFile } from '../../config/writeOwnerOnlyFile.ts';
import { loadHostIdentity, type HostIdentity } from '../../identity/hostIdentity.ts';
import { relayClientFor, relyingPartyOf } from '../../relay/hostRelay.ts';
import { relayFailureText, type RelayClient } from '../../relay/relayClient.ts';
import type { AuditLog } from '../../audit/auditLog.ts';
import { canPromptOnTty, promptOnTty } from '../../fallback/ttyPrompt.ts';
import { enrolmentFingerprint, type Enrolment } from '../../pairing/enrolment.ts';
import { pairedBefore } from '../../pairing/pairedBefore.ts';
import { pairingScreen } from '../../pairing/pairingScreen.ts';
import { totpScreen } from '../../pairing/totpScreen.ts';
import { callDaemon } from '../../socket/daemonClient.ts';
import type { GateAnswer } from '../../socket/localApi.ts';
import type { ConfirmOutcome } from '../../state/deviceStore.ts';
import type { StateStore } from '../../state/stateStore.ts';
import type { PairedDevice } from '../../../shared/pairing/verifyPairingCompletion.ts';
import { fail, openHome } from '../home.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a person has to type the phone's code on the terminal. */
const CODE_ENTRY_MS = 120_000;

/** Why this pairing ends without a phone (or TOTP) added: `latch pair` says it and exits 1. */
class NotAdded extends Error {}

function failIfNotAdded(error: unknown): never {
  if (error instanceof NotAdded) fail(error.message, 1);
  throw error;
}

/**
 * Makes a phone, whose pairing answer checked out, one this host trusts. Once one is paired,
 * another needs a paired phone's approval: an agent that runs `latch pair` must not enrol a
 * "phone" of its own. The first phone (or the first after every phone was revoked) is trusted
 * once the person at the terminal types the code it shows: whoever else saw the QR code, and
 * answered first, is not paired. Without a terminal (an agent's, `npm start`'s), a first phone is
 * trusted on the QR secret alone and the code is printed to compare; after revocations, never.
 * Either way its trust follows the relay's confirmation, without which the phone is told it was
 * not added and the relay never lists it: `trust` is for the caller once the relay has taken it.
 * A further one is stored by the daemon once a paired phone approves, not trusted until then
 * (state/deviceStore.ts), and `forget` takes it away should the relay refuse it.
 */
async function admit(
  device: PairedDevice,
  code: string,
  context: { store: StateStore; audit: AuditLog; approvalSeconds: number },
): Promise<{ trust: () => void; forget?: () => void }> {
  const { store, audit } = context;
  // Asked before any phone or code: the daemon refuses such an enrolment too.
  const refused = pairedBefore(store, device.id);
  if (refused) {
    audit.append({ event: 'pairing_refused', device: device.id, code: refused.code });
    throw new NotAdded(`${refused.message} (${refused.code})`);
  }
  if (store.devices().length > 0) {
    showCode(device, code);
    const enrolment = { kind: 'phone', device } as const;
    process.stdout.write(
      `Approve adding ${device.name} (keys ${enrolmentFingerprint(enrolment)}) on a phone already paired with this host (Face ID)…\n`,
    );
    const approvedIn = await askDaemonToEnrol(enrolment, context.approvalSeconds);
    return {
      trust: () => {
        const outcome = store.confirmDevice(device, Date.now());
        if (outcome !== 'confirmed') {
          audit.append({ event: 'pairing_refused', device: device.id, code: outcome });
          throw new NotAdded(notConfirmedText(device, outcome));
        }
        audit.append({ event: 'paired', device: device.id, name: device.name, approvedIn });
      },
      // Forgotten, not revoked: a phone revoked here never pairs again (pairedBefore), and a
      // relay's refusal must not keep it out for good.
      forget: () => {
        const forgotten = store.forgetAwaitingDevice(device);
        audit.append({
          event: 'pairing_refused',
          device: device.id,
          code: 'confirmation_refused',
          forgotten,
        });
      },
    };
  }
  const revokedEarlier = store.devices({ includeRevoked: true }).length > 0;
  const typedOnTerminal = canPromptOnTty();
  if (typedOnTerminal) {
    // The terminal keeps its own code to itself: the person types what the phone shows.
    const typed = await promptOnTty(
      [
        ...(revokedEarlier ? ['Every phone of this host was revoked.'] : []),
        `Type the code ${device.name} shows to trust it:`,
      ],
      Date.now() + CODE_ENTRY_MS,
    );
    if (typed?.trim() !== code) {
      const problem = typed === undefined ? 'code_not_typed' : 'code_mismatch';
      audit.append({ event: 'pairing_refused', device: device.id, code: problem });
      throw new NotAdded(
        `${problem === 'code_mismatch' ? 'the code does not match' : 'no code was typed in time'}; the phone was not added. Run latch pair again.`,
      );
    }
  } else if (revokedEarlier) {
    throw new NotAdded('every phone of this host is revoked: run latch pair in a terminal to add one');
  } else {
    showCode(device, code);
    process.stdout.write('(No terminal to type it on: this first phone is trusted on the QR code alone.)\n');
  }
  return {
    trust: () => {
      store.addDevice(device, Date.now());
      audit.append({ event: 'paired', device: device.id, name: device.name, codeTyped: typedOnTerminal });
    },
  };
}

/** Why a further phone the relay took is not trusted here after all, for the terminal. */
function notConfirmedText(device: PairedDevice, outcome: Exclude<ConfirmOutcome, 'confirmed'>): string {
  const notAdded = `${device.name} was not added here; revoke it in the app`;
  switch (outcome) {
    case 'approver_revoked':
      return `the phone that approved adding ${device.name} was revoked on this host while it paired: ${notAdded}, and run latch pair again to have a phone still paired approve it (${outcome})`;
    case 'paired_before':
      return `${device.name} was revoked or paired anew on this host while it paired: ${notAdded} (${outcome})`;
    case 'not_awaiting':
      return `${device.name} was forgotten or paired anew on this host while it paired: ${notAdded} and run latch pair again (${outcome})`;
  }
}

/** The code for a person to compare with the phone's, and what to do if they differ. */
function showCode(device: PairedDevice, code: string): void {
  process.stdout.write(
    `\nYour phone shows this code: ${code}\nIf it does not, run latch devices --revoke ${device.id}.\n`,
  );
}

/**
 * Asks the running daemon to add a phone or TOTP once a paired phone approves: the approval's
 * request id, or NotAdded.
 */
async function askDaemonToEnrol(enrolment: Enrolment, approvalSeconds: number): Promise<string | undefined> {
  let answer: GateAnswer | { error: { code: string; message: string } };
  try {
    answer = await callDaemon<typeof answer>('POST', '/v1/enrol', enrolment, {
      timeoutMs: (approvalSeconds + 30) * 1000,
    });
  } catch (error) {
    throw new NotAdded(`a paired phone must approve this, through the daemon: ${(error as Error).message}`);
  }
  if ('error' in answer) throw new NotAdded(`not added: ${answer.error.message} (${answer.error.code})`);
  if (answer.decision !== 'allow') throw new NotAdded(`not added: ${answer.reason}`);
  return answer.requestId;
}

/**
 * Shows the offer's code, waits for a phone's answer, checks it, admits the phone and has the
 * relay confirm it. NotAdded when any step says no.
 */
async function confirmedPairing(
  offer: PairingOffer,
  secret: Uint8Array<ArrayBuffer>,
  macKey: CryptoKey,
  context: {
    relay: RelayClient;
    relying: RelyingParty;
    store: StateStore;
    audit: AuditLog;
    config: LatchConfig;
    host: HostIdentity;
  },
): Promise<{ paired: PairedDevice; trust: () => void; hostToken?: string }> {
  const { relay, relying, store, audit, config, host } = context;
  // No blank lines around the code: its quiet zone is drawn, and every row counts at 80×24.
  process.stdout.write(pairingScreen(pairingLink({ origin: config.relay.url, secret })));

  let completion;
  while (!completion) {
    if (Date.now() > offer.exp) throw new NotAdded('the pairing code expired; run latch pair again');
    const status = await relay.offerStatus(offer.offerId, offer.offerToken);
    if (status.ok && status.value.completion) completion = status.value.completion;
    else await sleep(1000);
  }
  const paired = await verifyPairingCompletion(completion, offer, secret, relying);
  if (!paired.ok) {
    audit.append({ event: 'pairing_refused', offerId: offer.offerId, code: paired.error.code });
    throw new NotAdded(`refused the phone’s answer: ${paired.error.message} (${paired.error.code})`);
  }
  const code = await shortCode(macKey, offer, completion);
  const { trust, forget } = await admit(paired.value, code, {
    store,
    audit,
    approvalSeconds: config.approvals.timeoutSeconds,
  });

  const envelope = await signEnvelope(
    'pair-confirm',
    { fleet: offer.fleet, offerId: offer.offerId, device: paired.value.id },
    { role: 'host', id: host.id },
    host.privateKey,
  );
  const confirmed = await relay.confirmOffer(offer.offerId, {
    v: PROTOCOL_VERSION,
    envelope,
    quorum: config.killSwitch.quorum,
  });
  // Refused, the phone is not trusted here either: the relay would not let it reach this host.
  if (!confirmed.ok) {
    forget?.();
    throw new NotAdded(
      `the relay did not take the confirmation: ${relayFailureText(confirmed.failure)}; the phone was not added`,
    );
  }
  return {
    paired: paired.value,
    trust,
    ...(confirmed.value.hostToken ? { hostToken: confirmed.value.hostToken } : {}),
  };
}

export async function run(options: { totp?: boolean; timeout: number }): Promise<void> {
  const { files, config, store, audit } = openHome();
  const host = await loadHostIdentity(files.hostKey);
  const relay = relayClientFor(files, config);
  const relying = relyingPartyOf(config);
  const ttlMs = options.timeout * 1000;

  const secret = randomBytes(PAIRING_SECRET_BYTES);
  const { offerId, offerToken, macKey } = await derivePairingKeys(secret);
  const unsigned = {
    v: PROTOCOL_VERSION,
    fleet: config.host.fleet,
    host: host.id,
    hostName: shownHostName(config.host.name),
    offerId,
    hostKey: host.publicKey,
    offerToken,
    exp: Date.now() + ttlMs,
  };
  const offer: PairingOffer = { ...unsigned, offerMac: await offerMac(macKey, unsigned) };
  const created = await relay.createOffer(offer);
  if (!created.ok) fail(`the relay did not take the pairing offer: ${relayFailureText(created.failure)}`, 1);

  // Every way out before the relay took the confirmation takes the offer back, so that a phone
  // waiting on it is told it was not added, rather than waiting until the offer expires.
  const withdraw = () => relay.withdrawOffer(offer.offerId, offerToken);
  const stopped = (signal: NodeJS.Signals) =>
    void withdraw().finally(() => process.exit(128 + osConstants.signals[signal]));
  process.once('SIGINT', stopped).once('SIGTERM', stopped);
  let pairing: Awaited<ReturnType<typeof confirmedPairing>>;
  try {
    pairing = await confirmedPairing(offer, secret, macKey, { relay, relying, store, audit, config, host });
  } catch (error) {
    await withdraw();
    failIfNotAdded(error);
  } finally {
    process.off('SIGINT', stopped).off('SIGTERM', stopped);
  }
  const { paired, trust, hostToken } = pairing;
  try {
    trust();
  } catch (error) {
    failIfNotAdded(error);
  }
  if (hostToken) writeOwnerOnlyFile(files.hostToken, `${hostToken}\n`);
  process.stdout.write(
    `Paired ${paired.name}.\nNext: gate your agent with latch install claude-code (or latch install codex), then check with latch doctor.\n`,
  );

  const phones = store.devices().length;
  const { quorum } = config.killSwitch;
  if (phones < quorum) {
    process.stdout.write(
      `Note: resuming after a freeze takes ${quorum} phones and ${phones} ${phones === 1 ? 'is' : 'are'} paired. ` +
        'Pair another phone, or set kill_switch.quorum in the config.\n',
    );
  }
  // A higher quorum is offered once there are phones for it; raising it only tightens.
  if (phones > quorum) {
    process.stdout.write(
      `Resuming after a freeze takes ${quorum} of your ${phones} phones. To require ${phones}, set quorum = ${phones} ` +
        `under [kill_switch] in ${files.config}; raising it takes effect at once.\n`,
    );
  }

  if (options.totp) {
    const totpSecret = newTotpSecret();
    const enrolment: Enrolment = { kind: 'totp', secret: toBase64url(totpSecret) };
    process.stdout.write(
      `\nApprove the TOTP authenticator (key ${enrolmentFingerprint(enrolment)}) on your phone (Face ID)…\n`,
    );
    await askDaemonToEnrol(enrolment, config.approvals.timeoutSeconds).catch(failIfNotAdded);
    process.stdout.write(totpScreen(totpUri(totpSecret, config.host.name)));
  }
  store.close();
}
