import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostsJson } from '../../daemon/cli/commands/hosts.ts';
import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { approvePending, holdPanic, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush, shownNotifications } from '../support/browserPhone.ts';
import { HostileProxy } from '../support/hostileProxy.ts';
import {
  askHook,
  auditLines,
  hookInput,
  runLatch,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
[[rule]]
name = "destructive"
tool = "Bash"
command = "rm *"
action = "ask"
risk = "medium"
`;

/** One of the fleet's two hosts: its own Latch home, its own `latch daemon` on its own socket. */
interface Host {
  name: string;
  machine: LatchMachine;
  daemon: RunningDaemon;
  id: string;
  fleet: string;
}

let rig: PhoneRig;
let proxy: HostileProxy;
let origin: string;
let pushService: PushServiceClient;
let alpha: Host;
let beta: Host;
let phone: PairedBrowserPhone | undefined;

async function hostsJson(machine: LatchMachine): Promise<HostsJson> {
  const ran = await runLatch(machine, ['hosts', '--json']);
  if (ran.code !== 0) throw new Error(`latch hosts failed: ${ran.stderr}`);
  return JSON.parse(ran.stdout) as HostsJson;
}

/** A host set up by the rig, with its id and fleet as `latch hosts` tells them. */
async function hostOf(name: string, { machine, daemon }: { machine: LatchMachine; daemon: RunningDaemon }) {
  const joined = await hostsJson(machine);
  return { name, machine, daemon, id: joined.host.id, fleet: joined.fleet };
}

beforeAll(async () => {
  // Both daemons and the phone reach the relay through the proxy: it records what passes, and
  // can hand one host's token to the other.
  rig = await startPhoneRig({
    name: 'e2e-multihost-relay',
    relay: 'plain',
    hostileProxy: true,
    policy: POLICY,
    hostName: 'alpha-box',
  });
  ({ origin, pushService } = rig);
  proxy = rig.proxy!;
  alpha = await hostOf('alpha-box', rig);
  // The second host joins the first one's fleet, as `latch hosts` on the first one says.
  beta = await hostOf(
    'beta-box',
    await rig.addHost({ policy: POLICY, name: 'beta-box', fleet: alpha.fleet }),
  );
}, 120_000);

afterAll(async () => {
  await rig?.stop();
});

/** A Claude Code PreToolUse hook call on one host, through `latch hook claude-code`. */
const hook = (host: Host, tool: string, toolInput: Record<string, unknown>) =>
  askHook(
    host.machine,
    hookInput('PreToolUse', tool, toolInput, { session_id: `e2e-${host.name}`, cwd: '/srv/app' }),
  );

const status = async (host: Host) => (await runLatch(host.machine, ['status'])).code;
const statusJson = async (host: Host) =>
  JSON.parse((await runLatch(host.machine, ['status', '--json'])).stdout) as Record<string, unknown>;
const audited = (host: Host, event: string) =>
  auditLines(host.machine).filter((line) => line['event'] === event);
const hostToken = (host: Host) => readFileSync(host.machine.files.hostToken, 'utf8').trim();

/** The id of the first request `host` sent the relay (through the proxy) after the `after`th. */
async function requestOf(host: Host, after: number): Promise<string> {
  await expect.poll(() => proxy.requests.slice(after).some((request) => request.host === host.id)).toBe(true);
  return proxy.requests.slice(after).find((request) => request.host === host.id)!.requestId;
}

/**
 * Waits for the push of `requestId`, hands it to the phone's service worker as the browser
 * would, and returns the title and body of the notification it shows.
 */
async function notificationOf(requestId: string, pushesBefore: number): Promise<string> {
  const messages = await pushService.waitForMessages(phone!.pushId, pushesBefore + 1, 15_000);
  const message = messages.slice(pushesBefore).find((received) => {
    const pushed = JSON.parse(received.payload) as { type: string; requestId?: string };
    return pushed.type === 'request' && pushed.requestId === requestId;
  });
  if (!message) throw new Error(`no push for ${requestId}`);
  expect(await pushService.rejected()).toEqual([]);
  await phone!.browser.page.goto(origin);
  await deliverPush(phone!.browser, origin, message.payload);
  // Chromium lists a notification its worker showed late on a loaded machine: 1 s was once too short.
  await expect
    .poll(async () => (await shownNotifications(phone!.browser)).some((shown) => shown.tag === requestId), {
      timeout: 10_000,
    })
    .toBe(true);
  const shown = (await shownNotifications(phone!.browser)).find(
    (notification) => notification.tag === requestId,
  )!;
  return `${shown.title}\n${shown.body}`;
}

/** The token the relay carried to a host for one of its requests, as the phone made it. */
function carriedToken(requestId: string): CapabilityToken {
  const frame = proxy.frames.find(
    (seen) => seen.event.type === 'approved' && seen.event.requestId === requestId,
  );
  if (frame?.event.type !== 'approved') throw new Error(`no approval passed for ${requestId}`);
  return frame.event.token;
}

describe('two real hosts in one fleet, one phone', () => {
  it('the second host joins the fleet, and one phone pairs with both', async () => {
    expect(beta.fleet).toBe(alpha.fleet);
    expect(beta.id).not.toBe(alpha.id);
    phone = await rig.pairPhone('Phone');
    // The same phone scans the second host's code: it is already in the fleet, so the relay lets
    // it bring a new host in, and that host trusts it as its first phone.
    await rig.pairPhone('Phone', { machine: beta.machine, phone });
    for (const host of [alpha, beta]) {
      await expect
        .poll(async () => statusJson(host))
        .toMatchObject({ state: 'armed', relay: 'connected', devices: 1 });
    }
    expect(proxy.daemonsConnected).toBe(2);
    // One phone, with the same keys on both hosts.
    const phoneIds = async (host: Host) =>
      (
        JSON.parse((await runLatch(host.machine, ['devices', '--json'])).stdout) as {
          devices: { id: string }[];
        }
      ).devices.map((device) => device.id);
    expect(await phoneIds(beta)).toEqual(await phoneIds(alpha));
  });

  it('host A: a PreToolUse Bash rm -rf build is pushed, shown with A’s name, approved, and allowed on A', async () => {
    const pushes = (await pushService.messages(phone!.pushId)).length;
    const sent = proxy.requests.length;
    const answer = hook(alpha, 'Bash', { command: 'rm -rf build' });
    const requestId = await requestOf(alpha, sent);
    // The notification and the list both name the host the call waits on.
    const notification = await notificationOf(requestId, pushes);
    expect(notification).toContain('alpha-box');
    expect(notification).toContain('rm -rf build');
    await approvePending(phone!.browser, origin, /rm -rf build.*alpha-box/);
    expect(await answer).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: approved on Phone',
    });
    expect(audited(alpha, 'approved')).toMatchObject([{ requestId, verified: true }]);
    // The approval went to A alone.
    expect(audited(beta, 'approved')).toEqual([]);
    expect(audited(beta, 'token_refused')).toEqual([]);
  });

  it('host B: the same call is approved and allowed on B; A’s token replayed at B is refused', async () => {
    const alphaRequest = proxy.requests.find((request) => request.host === alpha.id)!.requestId;
    const alphaToken = carriedToken(alphaRequest);
    const pushes = (await pushService.messages(phone!.pushId)).length;
    const sent = proxy.requests.length;
    const answer = hook(beta, 'Bash', { command: 'rm -rf build' });
    const betaRequest = await requestOf(beta, sent);
    const notification = await notificationOf(betaRequest, pushes);
    expect(notification).toContain('beta-box');
    expect(notification).toContain('rm -rf build');

    // A relay that kept A's token hands it to B: as it is, and relabelled as an approval of B's
    // own pending request for the very same command. Neither is worth anything at B.
    proxy.inject(
      { v: PROTOCOL_VERSION, type: 'approved', requestId: alphaRequest, token: alphaToken, at: Date.now() },
      { to: hostToken(beta) },
    );
    proxy.inject(
      {
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: betaRequest,
        token: { ...alphaToken, host: beta.id, requestId: betaRequest },
        at: Date.now(),
      },
      { to: hostToken(beta) },
    );
    await expect
      .poll(() => audited(beta, 'token_refused').map((line) => [line['requestId'], line['code']]))
      .toEqual([
        [alphaRequest, 'unknown_request'],
        [betaRequest, 'challenge_mismatch'],
      ]);
    expect(audited(beta, 'approved')).toEqual([]);
    expect(await statusJson(beta)).toMatchObject({ pending: 1 });

    // The phone's own approval of B's request is what lets it run.
    await approvePending(phone!.browser, origin, /rm -rf build.*beta-box/);
    expect(await answer).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: approved on Phone',
    });
    expect(audited(beta, 'approved')).toMatchObject([{ requestId: betaRequest, verified: true }]);
    expect(audited(alpha, 'approved')).toHaveLength(1);
  });

  it('one panic from the phone freezes both hosts with kill_switch; one vote resumes both', async () => {
    await holdPanic(phone!.browser, origin);
    for (const host of [alpha, beta]) {
      await expect.poll(() => status(host)).toBe(1);
      expect(audited(host, 'freeze').at(-1)).toMatchObject({
        cause: 'relay',
        verified: true,
        signer: { role: 'device' },
      });
    }
    // The same freeze on both: one signed envelope, one id.
    expect(audited(beta, 'freeze').at(-1)!['freeze']).toBe(audited(alpha, 'freeze').at(-1)!['freeze']);
    for (const host of [alpha, beta]) {
      expect(await hook(host, 'Read', { file_path: '/srv/app/README.md' })).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^latch: kill_switch/),
      });
    }

    // Quorum 1 (the default): this phone's one vote ends the freeze on every host.
    await phone!.browser.page.goto(origin);
    await phone!.browser.page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
    for (const host of [alpha, beta]) {
      await expect.poll(() => status(host)).toBe(0);
      expect(audited(host, 'resume').at(-1)).toMatchObject({ votes: [expect.any(String)], needed: 1 });
      expect(await hook(host, 'Read', { file_path: '/srv/app/README.md' })).toMatchObject({
        permissionDecision: 'allow',
      });
    }
  });

  it('latch panic on one host freezes the other too, and the phone’s vote resumes both', async () => {
    const panic = await runLatch(beta.machine, ['panic', 'from', 'beta']);
    expect(panic.code).toBe(0);
    for (const host of [alpha, beta]) await expect.poll(() => status(host)).toBe(1);
    expect(await hook(alpha, 'Read', { file_path: '/srv/app/README.md' })).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/^latch: kill_switch/),
    });
    // A host knows its own key and its phones' keys, not the other hosts': alpha honours beta's
    // freeze (the safe direction) and says it could not verify it.
    expect(audited(alpha, 'freeze').at(-1)).toMatchObject({
      cause: 'relay',
      verified: false,
      signer: { role: 'host', id: beta.id },
      reason: 'from beta',
    });
    expect(audited(beta, 'freeze').at(-1)).toMatchObject({ cause: 'panic', verified: true });

    await phone!.browser.page.goto(origin);
    await phone!.browser.page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
    for (const host of [alpha, beta]) {
      await expect.poll(() => status(host)).toBe(0);
      expect(await hook(host, 'Read', { file_path: '/srv/app/README.md' })).toMatchObject({
        permissionDecision: 'allow',
      });
    }
  });
});
