import { spawn } from 'node:child_process';
import { parsePairingLink } from '../../shared/pairing/pairingLink.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { shortCode } from '../../shared/pairing/pairingTranscript.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import type { PushSubscriptionJson } from '../../shared/messages/common.ts';
import type { LatchMachine } from './latchMachine.ts';
import { completePairing, createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { decidePendingAtRelay } from './phoneAtRelay.ts';
import type { RelayDriver } from './relayDriver.ts';
import { LATCH_BIN } from './latchCli.ts';

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
  } = {},
): Promise<{
  phone: TestPhone;
  fleet: string;
  stdout: string;
  stderr: string;
  phoneCode: string;
  /** What the admitting phone was shown, when one was asked. */
  admission?: RequestDetails;
}> {
  const pair = spawn(process.execPath, [LATCH_BIN, 'pair'], {
    env: machine.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  pair.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  pair.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 15_000;
  while (!/^http\S+\/pair#\S+$/m.test(stdout)) {
    if (Date.now() > deadline || pair.exitCode !== null)
      throw new Error(`latch pair printed no link:\n${stdout}\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const link = parsePairingLink(/^(http\S+\/pair#\S+)$/m.exec(stdout)![1]!);
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
  if (sent.status !== 202) throw new Error(`the relay refused the completion: ${JSON.stringify(sent.body)}`);
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
  const code = await new Promise<number | null>((resolve) => pair.once('exit', resolve));
  // A denied admission is meant to fail: the caller looks at what latch pair said.
  if (code !== 0 && options.admittedBy?.decision !== 'deny')
    throw new Error(`latch pair failed:\n${stdout}\n${stderr}`);
  return { phone, fleet: offer.fleet, stdout, stderr, phoneCode, ...(admission ? { admission } : {}) };
}
