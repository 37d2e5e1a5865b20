import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigKeeper } from '../../daemon/config/configKeeper.ts';
import { sealRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import type { RequestList } from '../../shared/messages/relayViews.ts';
import { requestDetails, type PairedFleet } from '../../scripts/lib/approvalFixture.ts';
import { openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush, shownNotifications } from '../support/browserPhone.ts';
import { keptOnPhone } from '../support/keptOnPhone.ts';
import { askHook, hookInput, startDaemonForTest, withStore } from '../support/latchMachine.ts';
import { ASK_EVERY_BASH_CALL, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';

// Review rh (a compromised second host): the card and the notification named the host its daemon
// sealed in the details, so a second host of the fleet could pass its request off as the first's.

let rig: PhoneRig;
let phoneA: PairedBrowserPhone;

beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'pwa-host-names',
    relay: 'plain',
    policy: ASK_EVERY_BASH_CALL,
    phones: ['Phone A'],
    hostName: 'first-box',
  });
  [phoneA] = rig.phones as [PairedBrowserPhone];
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

const fleetOf = (config: string) => /^fleet\s*=\s*"([^"]+)"/m.exec(readFileSync(config, 'utf8'))![1]!;

describe('the host a request names', () => {
  it('is the name the phone learned at pairing: a second host whose requests call it first-box reads second-box on the card and the notification', async () => {
    const { origin, pushService } = rig;
    const { browser, pushId } = phoneA;
    const { machine: second, daemon } = await rig.addHost({
      policy: ASK_EVERY_BASH_CALL,
      name: 'second-box',
      fleet: fleetOf(rig.machine.files.config),
    });
    await rig.pairPhone('Phone A', { machine: second, phone: phoneA });
    // The second host turns: its daemon now seals the first host's name into its requests.
    await daemon.stop();
    const config = readFileSync(second.files.config, 'utf8').replace('"second-box"', '"first-box"');
    writeFileSync(second.files.config, config, { mode: 0o600 });
    withStore(second, (store, audit) =>
      new ConfigKeeper(second.files.config, store, audit).approve(config, 'test: a host gone rogue'),
    );
    await startDaemonForTest(second);

    const before = (await pushService.messages(pushId)).length;
    const hook = askHook(
      second,
      hookInput(
        'PreToolUse',
        'Bash',
        { command: 'git push --force origin main' },
        { session_id: 's', cwd: '/srv/app' },
      ),
    );
    const [message] = (await pushService.waitForMessages(pushId, before + 1, 15_000)).slice(before);
    await browser.page.goto(origin);
    await deliverPush(browser, origin, message!.payload);
    await expect
      .poll(() => shownNotifications(browser))
      .toEqual([
        expect.objectContaining({ title: 'git push --force origin main', body: 'app · s · second-box' }),
      ]);

    await openPending(browser, origin, /git push --force/);
    const meta = browser.page.locator('main .request-meta');
    await meta.waitFor();
    expect(await meta.textContent()).toMatch(/^app · s · second-box · /);
    expect(await browser.page.locator('main').textContent()).not.toContain('first-box');
    // What the phone signs is still the details as sealed: the second host's daemon takes it.
    await browser.page.getByRole('button', { name: 'Approve with Face ID' }).click({ timeout: 40_000 });
    await browser.page.getByRole('status').getByText('Approval sent').waitFor();
    expect(await hook).toMatchObject({ permissionDecision: 'allow' });
  });

  it('opens no request of a host this phone did not pair with, whatever name its box gives', async () => {
    const { page } = phoneA.browser;
    const kept = await keptOnPhone(page);
    const identity = JSON.parse(kept['identity']!) as { id: string; ecdhKey: string };
    const fleet = fleetOf(rig.machine.files.config);
    const memberships = JSON.parse(kept['memberships']!) as {
      fleet: string;
      hosts: { id: string; name: string }[];
    }[];
    const first = memberships.find((membership) => membership.fleet === fleet)!.hosts[0]!;
    // Two boxes sealed for this phone, as the relay's list would carry them: one of the first
    // host, one of a host id the phone never learned, both calling their host first-box.
    const view = async (host: string, title: string) => {
      const details = requestDetails({ fleet, host: { id: host } } as unknown as PairedFleet, {
        title,
        hostName: 'first-box',
        risk: 'low',
        createdAt: Date.now(),
        exp: Date.now() + 5 * 60_000,
      });
      return {
        requestId: details.requestId,
        host,
        conversation: 'none',
        risk: 'low' as const,
        createdAt: details.createdAt,
        exp: details.exp,
        state: 'pending' as const,
        box: await sealRequestDetails(details, identity),
      };
    };
    const list: RequestList = {
      v: 1,
      requests: [
        await view(first.id, 'Run the known script'),
        await view('stranger-host', 'Run the stranger script'),
      ],
    };
    await page.route(`**/v1/fleets/${fleet}/requests?state=pending`, (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(list) }),
    );
    try {
      await page.goto(rig.origin);
      await page.getByRole('button', { name: /Run the known script/ }).waitFor();
      expect(await page.getByText('Run the stranger script').count()).toBe(0);
    } finally {
      await page.unrouteAll();
    }
  });
});
