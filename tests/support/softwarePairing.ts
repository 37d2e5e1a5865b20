import { parsePairingLink } from '../../shared/pairing/pairingLink.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { shortCode } from '../../shared/pairing/pairingTranscript.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import type { PushSubscriptionJson } from '../../shared/messages/common.ts';
import type { LatchMachine } from './latchMachine.ts';
import { completePairing, createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { decidePendingAtRelay } from './phoneAtRelay.ts';
import type { RelayDriver } from './relayDriver.ts';
import { pairingLinkOn, startLatch } from './latchRun.ts';

/**
 * Runs `latch pair` and plays, in software, the phone that scans its code: fetches the offer by
 * the id its secret yields, checks its MAC, registers a passkey, answers under the MAC. Resolves
 * once `latch pair` exits.
 */
export async function pairSoftwarePhone(
  machine: LatchMachine,
  relay: RelayDriver,
  options: {
    name?: string;
    push?: PushSubscriptionJson;
    counter?: 'increment' | 'zero';
    /** A phone already paired with this host, which approves (or denies) adding this one. */
    admittedBy?: { phone: TestPhone; decision: 'approve' | 'deny' };
    /**
     * `latch pair` runs on a terminal of its own, where this is typed once it asks for the code
     * (given the code the phone shows). Without it, it runs with no terminal.
     */
    typeOnTerminal?: (phoneCode: string) => string | Promise<string>;
    /** latch pair is meant to refuse the phone: the caller looks at what it said. */
    refusalExpected?: boolean;
    /** More of latch pair's options (`--totp`). */
    args?: string[];
  } = {},
): Promise<{
  phone: TestPhone;
  fleet: string;
  stdout: string;
  stderr: string;
  phoneCode: string;
  /** How latch pair exited. */
  code: number | null;
  /** What the admitting phone was shown, when one was asked. */
  admission?: RequestDetails;
}> {
  const pair = startLatch(machine, ['pair', ...(options.args ?? [])], {
    terminal: options.typeOnTerminal !== undefined,
  });
  // Ended however this ends: a failed pairing leaves no latch pair waiting.
  try {
    const link = parsePairingLink(await pair.waitFor(pairingLinkOn, 'a pairing link'));
    if (!link.ok) throw link.error;

    const { offerId, offerToken, macKey } = await derivePairingKeys(link.value.secret);
    const scanned = await relay.scanOffer(link.value.secret);
    if (!scanned.offer?.ok)
      throw new Error(`the phone refused the offer: ${JSON.stringify(scanned.reply.body)}`);
    const offer = scanned.offer.value;

    const phone = await createPhone(
      options.name ?? 'Software phone',
      options.counter ? { counter: options.counter } : {},
    );
    const completion = await completePairing(phone, offer, link.value.secret, {
      origin: relay.origin,
      rpId: relay.rpId,
      ...(options.push ? { push: options.push } : {}),
    });
    const sent = await relay.sendCompletion(phone, offer.fleet, offerId, offerToken, completion);
    if (sent.status !== 202)
      throw new Error(`the relay refused the completion: ${JSON.stringify(sent.body)}`);
    const admission = options.admittedBy
      ? await decidePendingAtRelay(
          relay,
          options.admittedBy.phone,
          offer.fleet,
          (details) => details.tool === 'latch.phone' && details.title.includes(phone.name),
          options.admittedBy.decision,
        )
      : undefined;
    const phoneCode = await shortCode(macKey, offer, completion);
    if (options.typeOnTerminal) {
      await pair.waitFor(
        (screen) => (screen.endsWith('to trust it: ') ? true : undefined),
        'the code prompt',
      );
      pair.type(await options.typeOnTerminal(phoneCode));
    }
    const code = await pair.exited;
    const [stdout, stderr] = [pair.stdout(), pair.stderr()];
    if (code !== 0 && !options.refusalExpected && options.admittedBy?.decision !== 'deny')
      throw new Error(`latch pair failed:\n${stdout}\n${stderr}`);
    return {
      phone,
      fleet: offer.fleet,
      code,
      stdout,
      stderr,
      phoneCode,
      ...(admission ? { admission } : {}),
    };
  } finally {
    pair.kill();
  }
}
