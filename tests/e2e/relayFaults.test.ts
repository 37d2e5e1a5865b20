import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { PairedBrowserPhone } from '../support/browserFlows.ts';
import type { HostileProxy } from '../support/hostileProxy.ts';
import { createPhone } from '../../scripts/lib/softwarePhone.ts';
import type { PhoneRig } from '../support/phoneRig.ts';
import { startWholeLoopRig, type WholeLoopRig } from '../support/wholeLoopRig.ts';

let rig: PhoneRig;
let proxy: HostileProxy;
let origin: string;
let hook: WholeLoopRig['hook'];
let approveOn: WholeLoopRig['approveOn'];
let denyOn: WholeLoopRig['denyOn'];
let refusals: WholeLoopRig['refusals'];
/** Every command asked about in this suite, for the storage check at its end. */
let commands: string[];
let a: PairedBrowserPhone;
let b: PairedBrowserPhone;

beforeAll(async () => {
  // Phone A, trusted first, approves adding phone B: the first request and approval the relay carries.
  ({ rig, proxy, hook, approveOn, denyOn, refusals, commands } = await startWholeLoopRig([
    'Phone A',
    'Phone B',
  ]));
  ({ origin } = rig);
  [a, b] = rig.phones as [PairedBrowserPhone, PairedBrowserPhone];
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

const latestRequestId = () => proxy.requests.at(-1)!.requestId;

describe('the whole loop, every part real', () => {
  describe('a hostile relay', () => {
    it('forges an approval with a key of its own: refused, audited, nothing runs', async () => {
      const answer = hook('Bash', { command: 'rm -rf ~/.ssh' });
      await expect.poll(() => proxy.requests.at(-1)?.sealed.length).toBe(2);
      const request = proxy.requests.at(-1)!;
      const relaysOwn = await createPhone('The relay’s own key');
      const assertion = await relaysOwn.authenticator.assert({
        rpId: 'localhost',
        origin,
        challenge: new Uint8Array(32),
      });
      const phoneId = request.sealed[0]!.device;
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: request.requestId,
        token: {
          v: PROTOCOL_VERSION,
          fleet: request.fleet,
          host: request.host,
          requestId: request.requestId,
          decision: 'approve',
          device: phoneId,
          assertion,
        },
        at: Date.now(),
      });
      await expect
        .poll(() => refusals(request.requestId).map((line) => line['code']))
        .toEqual(['unknown_credential']);
      await denyOn(a, /rm -rf ~\/\.ssh/);
      expect(await answer).toMatchObject({ permissionDecision: 'deny' });
    });

    it('replays an old token for a new request, and again for its own: refused, audited, nothing runs', async () => {
      const old = proxy.frames.find((frame) => frame.event.type === 'approved')!.event as {
        token: CapabilityToken;
        requestId: string;
      };
      const answer = hook('Bash', { command: 'rm -rf /etc/nginx' });
      await expect.poll(() => proxy.requests.length).toBeGreaterThan(0);
      await expect
        .poll(
          () =>
            refusals(latestRequestId()).length === 0 && proxy.requests.at(-1)!.requestId !== old.requestId,
        )
        .toBe(true);
      const requestId = latestRequestId();
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId,
        token: { ...old.token, requestId },
        at: Date.now(),
      });
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: old.requestId,
        token: old.token,
        at: Date.now(),
      });
      await expect
        .poll(() => refusals(requestId).map((line) => line['code']))
        .toEqual(['challenge_mismatch']);
      await expect.poll(() => refusals(old.requestId).length).toBe(1);
      expect(['already_used', 'counter_not_increased']).toContain(refusals(old.requestId)[0]!['code']);
      await denyOn(b, /rm -rf \/etc\/nginx/);
      expect(await answer).toMatchObject({ permissionDecision: 'deny' });
    });

    it('swaps the request text for a harmless one: the phone cannot open it, so nobody approves, and it expires', async () => {
      proxy.swapBoxesWith = proxy.requests[0]!.sealed; // the boxes of adding Phone B, approved earlier
      const answer = hook('Bash', { command: 'rm -rf /srv' });
      await expect.poll(() => proxy.requests.at(-1)?.sealed).toBe(proxy.swapBoxesWith);
      proxy.swapBoxesWith = undefined;
      await a.browser.page.goto(origin);
      // The box is bound to its own request: under another request id it does not open, so the
      // harmless text is never shown for the dangerous call.
      await a.browser.page.getByText('Nothing is waiting.').waitFor();
      expect(await answer).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^latch: expired/),
      });
    });
  });

  describe('restarts', () => {
    it('a relay restarted with a request pending: the request can still be decided', async () => {
      const answer = hook('Bash', { command: 'rm -rf node_modules' });
      // Stored at the relay: the phone lists it.
      await b.browser.page.goto(origin);
      await b.browser.page.getByRole('button', { name: /rm -rf node_modules/ }).waitFor();
      await rig.restartRelay(async () => {
        await expect.poll(() => proxy.daemonConnected).toBe(false);
      });
      await approveOn(b, /rm -rf node_modules/);
      // The daemon was away while the phone decided: it hears the decision when it is back.
      await expect.poll(() => proxy.daemonConnected, { timeout: 30_000 }).toBe(true);
      expect(await answer).toMatchObject({
        permissionDecision: 'allow',
        permissionDecisionReason: 'latch: approved on Phone B',
      });
    });

    it('a daemon restarted: a used token stays used', async () => {
      const used = proxy.frames.filter((frame) => frame.event.type === 'approved').at(-1)!.event as {
        token: CapabilityToken;
        requestId: string;
      };
      await rig.restartDaemon();
      await expect.poll(() => proxy.daemonConnected).toBe(true);
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: used.requestId,
        token: used.token,
        at: Date.now(),
      });
      await expect.poll(() => refusals(used.requestId).length).toBe(1);
      expect(['already_used', 'counter_not_increased']).toContain(refusals(used.requestId)[0]!['code']);
    });
  });

  it('leaves no command text in the relay’s persisted storage', () => {
    const files = (readdirSync(rig.state, { recursive: true, encoding: 'utf8' }) as string[])
      .map((file) => join(rig.state, file))
      .filter((path) => statSync(path).isFile() && !path.endsWith('relay.env'));
    const stored = files.map((path) => readFileSync(path).toString('latin1')).join('\n');
    expect(files.some((path) => path.endsWith('.sqlite'))).toBe(true);
    expect(stored).toContain(proxy.requests[0]!.requestId); // the storage is really read
    for (const command of commands) expect(stored, command).not.toContain(command);
  });
});
