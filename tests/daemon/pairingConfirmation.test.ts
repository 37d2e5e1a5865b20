import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completePairing, createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { parsePairingLink } from '../../shared/pairing/pairingLink.ts';
import { auditLines, pairPhoneDirectly, runLatch, withStore } from '../support/latchMachine.ts';
import { pairingLinkOn, startLatch } from '../support/latchRun.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { phoneApproves } from '../support/phoneApproves.ts';

/**
 * A phone's trust follows the relay's confirmation of its pairing, for a further phone as for
 * the first: a phone the relay refused is told it was not added, the relay never lists it, and it
 * cannot vote or approve through it, so a host that kept it would count a phone it cannot reach
 * (in `latch status`, in a quorum the person then raises). And a phone id this host revoked is
 * never added again: a revoke made in the app never expires.
 */

let paired: PairedDaemon;
beforeEach(async () => {
  paired = await startPairedDaemon();
});
afterEach(() => paired.stop());

/**
 * Runs `latch pair` for `phone`, which answers its offer; then, should `latch pair` ask a paired
 * phone, the first approves adding it. Resolves once `latch pair` exits; `interrupt` stops it
 * with Ctrl-C while the phone's approval is asked, or once it asks the relay to confirm.
 */
async function pairFurtherPhone(
  phone: TestPhone,
  options: { interrupt?: 'while-asked' | 'at-confirmation' } = {},
) {
  const { relay, machine } = paired;
  const pair = startLatch(machine, ['pair']);
  try {
    const link = parsePairingLink(await pair.waitFor(pairingLinkOn, 'a pairing link'));
    if (!link.ok) throw link.error;
    const { offerId } = await derivePairingKeys(link.value.secret);
    const held = relay.offers.get(offerId)!;
    const asked = relay.requests.length;
    held.completion = await completePairing(phone, held.offer, link.value.secret, {
      origin: relay.origin,
      rpId: new URL(relay.origin).hostname,
    });
    const request = await Promise.race([relay.nextRequest(asked), pair.exited.then(() => undefined)]);
    if (request && options.interrupt === 'while-asked') {
      pair.interrupt();
      await pair.exited;
    }
    if (request)
      relay.sendApproval(
        request.requestId,
        (await phoneApproves(paired.phones[0], request, relay.origin)).token,
      );
    if (options.interrupt === 'at-confirmation') {
      await expect.poll(() => held.confirmationsAsked ?? 0, { timeout: 30_000 }).toBe(1);
      pair.interrupt();
    }
    return {
      code: await pair.exited,
      stderr: pair.stderr(),
      state: held.state,
      askedPhone: request !== undefined,
    };
  } finally {
    pair.kill();
  }
}

describe('latch pair, once a phone is paired', () => {
  it('is not trusted when the relay refuses the confirmation, as it says, and pairs once the relay takes it', async () => {
    const { relay, machine } = paired;
    const phone = await createPhone('Second phone');
    relay.refuseConfirmation = { status: 409, code: 'offer_closed' };
    const refused = await pairFurtherPhone(phone);

    expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeUndefined();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'the relay did not take the confirmation: the relay refused it (HTTP 409, offer_closed); the phone was not added',
    );
    expect(refused.state).toBe('withdrawn');
    expect((await runLatch(machine, ['status'])).stdout).toContain(', 1 phone,');
    expect(auditLines(machine).filter(({ device }) => device === phone.id)).toEqual([
      expect.objectContaining({ event: 'pairing_approved', device: phone.id }),
      expect.objectContaining({
        event: 'pairing_refused',
        device: phone.id,
        code: 'confirmation_refused',
        forgotten: true,
      }),
    ]);

    // Not revoked: the same phone pairs once the relay takes the confirmation.
    relay.refuseConfirmation = undefined;
    const added = await pairFurtherPhone(phone);
    expect(added.code).toBe(0);
    expect(added.state).toBe('confirmed');
    expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeDefined();
  });

  it.each(['while-asked', 'at-confirmation'] as const)(
    'is not trusted when latch pair is stopped with Ctrl-C %s, after which the phone pairs again',
    async (interrupt) => {
      const { relay, machine } = paired;
      const phone = await createPhone('Second phone');
      relay.holdConfirmation = true;
      const stopped = await pairFurtherPhone(phone, { interrupt });
      expect(stopped.code).toBe(130);
      expect(stopped.state).toBe('withdrawn');
      // Approved, then given up: the daemon stored it awaiting a confirmation that never came.
      await expect
        .poll(() => auditLines(machine).filter(({ device }) => device === phone.id))
        .toEqual([expect.objectContaining({ event: 'pairing_approved', device: phone.id })]);
      expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeUndefined();
      expect((await runLatch(machine, ['status'])).stdout).toContain(', 1 phone,');
      expect((await runLatch(machine, ['devices'])).stdout).not.toContain(phone.id);

      relay.holdConfirmation = false;
      const added = await pairFurtherPhone(phone);
      expect(added.code).toBe(0);
      expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeDefined();
      expect(auditLines(machine).at(-1)).toMatchObject({ event: 'paired', device: phone.id });
    },
  );

  it.each([
    [
      'it',
      'paired_before',
      (phone: TestPhone) => phone.id,
      'Second phone was revoked or paired anew on this host while it paired: Second phone was not added here; revoke it in the app (paired_before)',
    ],
    [
      'the phone that approved it',
      'approver_revoked',
      () => paired.phones[0]!.id,
      'the phone that approved adding Second phone was revoked on this host while it paired: Second phone was not added here; revoke it in the app, and run latch pair again to have a phone still paired approve it (approver_revoked)',
    ],
  ])(
    'is not trusted when %s is revoked here after the approval, before latch pair confirms it (%s)',
    async (_, code, revoked, said) => {
      const { relay, machine } = paired;
      const phone = await createPhone('Second phone');
      let revoke: Awaited<ReturnType<typeof runLatch>> | undefined;
      relay.beforeConfirming = async () => {
        revoke = await runLatch(machine, ['devices', '--revoke', revoked(phone)]);
      };
      const result = await pairFurtherPhone(phone);
      relay.beforeConfirming = undefined;

      expect(revoke).toMatchObject({
        code: 0,
        stdout: `revoked ${revoked(phone)} on this host (revoke it in the app too)\n`,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`latch: ${said}`);
      expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeUndefined();
      expect(withStore(machine, (store) => store.awaitingDevice(phone.id))).toBe(false);
      expect(auditLines(machine).at(-1)).toMatchObject({ event: 'pairing_refused', device: phone.id, code });
    },
  );

  it('is refused, before any phone is asked, when it was revoked here (revoked_here)', async () => {
    const { relay, machine } = paired;
    const lost = (await pairPhoneDirectly(machine, relay.origin, { name: 'Lost phone' })).phone;
    expect((await runLatch(machine, ['devices', '--revoke', lost.id])).code).toBe(0);

    const again = await pairFurtherPhone(lost);
    expect(again.askedPhone).toBe(false);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `latch: Lost phone (${lost.id}) was revoked on this host, and a revoked phone never pairs here again: pair it as a new phone (clear the app's data, which gives it new keys), or start this host anew (latch init --reset) (revoked_here)`,
    );
    expect(again.state).toBe('withdrawn');
    expect(withStore(machine, (store) => store.activeDevice(lost.id))).toBeUndefined();
    expect(auditLines(machine).at(-1)).toMatchObject({
      event: 'pairing_refused',
      device: lost.id,
      code: 'revoked_here',
    });
  });
});
