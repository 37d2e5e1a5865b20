import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushMessageSchema, type PushMessage } from '../../shared/messages/events.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { approvePending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush, type BrowserPhone } from '../support/browserPhone.ts';
import { auditLines, hookInput, runLatch, type LatchMachine, type Ran } from '../support/latchMachine.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { notificationsOf, tapNotification } from '../support/serviceWorker.ts';

// Every Bash call asks, at low risk (no cooling-off): the tests are about the notification.
const POLICY = `
default = "ask"
[[rule]]
name = "shell"
tool = "Bash"
action = "ask"
risk = "low"
`;

let rig: PhoneRig;
let origin: string;
let pushService: PushServiceClient;
let machine: LatchMachine;
let a: PairedBrowserPhone;
let b: PairedBrowserPhone;

beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'notifications',
    relay: 'app-copy',
    policy: POLICY,
    phones: ['Phone A', 'Phone B'],
  });
  ({ origin, pushService, machine } = rig);
  [a, b] = rig.phones as [PairedBrowserPhone, PairedBrowserPhone];
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

/** An agent's Bash call through the Claude Code hook; its own session, so the push caps never bite. */
function ask(command: string): { answer: Promise<Ran & { decision?: string; reason?: string }> } {
  const input = hookInput('PreToolUse', 'Bash', { command }, { session_id: `session-${command}` });
  const answer = runLatch(machine, ['hook', 'claude-code'], { input, timeoutMs: 120_000 }).then((ran) => {
    const output = ran.stdout.trim()
      ? (
          JSON.parse(ran.stdout) as {
            hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string };
          }
        ).hookSpecificOutput
      : undefined;
    return { ...ran, decision: output?.permissionDecision, reason: output?.permissionDecisionReason };
  });
  // A test that fails before it awaits the answer leaves the hook waiting: not a second failure.
  answer.catch(() => {});
  return { answer };
}

const parsed = (payload: string): PushMessage => {
  const message = parseJson(pushMessageSchema, payload);
  if (!message.ok) throw new Error(`an unparsable push: ${payload}`);
  return message.value;
};

/**
 * The first push this phone's push service received, from its `from`-th on, that `matches`: as
 * plaintext, what the browser decrypts and hands the service worker.
 */
async function nextPush(
  phone: PairedBrowserPhone,
  matches: (message: PushMessage) => boolean,
  from = 0,
): Promise<{ payload: string; message: PushMessage }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = (await pushService.messages(phone.pushId))
      .slice(from)
      .map((received) => ({ payload: received.payload, message: parsed(received.payload) }))
      .find(({ message }) => matches(message));
    if (found) return found;
    if (Date.now() > deadline) throw new Error('the push never reached the push service');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const pushCount = async (phone: PairedBrowserPhone) => (await pushService.messages(phone.pushId)).length;

const closedPush = (phone: PairedBrowserPhone, requestId: string) =>
  nextPush(phone, (message) => message.type === 'closed' && message.requestId === requestId);

/** Delivers a request's push to a phone parked away from the list, and waits for its notification. */
async function showOn(phone: PairedBrowserPhone, from: number): Promise<string> {
  const found = await nextPush(phone, (message) => message.type === 'request', from);
  if (found.message.type !== 'request') throw new Error('not a request push');
  const { requestId } = found.message;
  await parkOnDevices(phone.browser);
  await deliverPush(phone.browser, origin, found.payload);
  await expect.poll(() => notificationsOf(phone.browser, requestId)).toHaveLength(1);
  return requestId;
}

/**
 * A phone with its app open somewhere that lists no requests (the list would close stale
 * notifications itself, and hide what the push does), under the service worker's control.
 */
async function parkOnDevices(phone: BrowserPhone): Promise<void> {
  await phone.page.goto(`${origin}/devices`);
  await phone.page.waitForFunction(() => navigator.serviceWorker.controller !== null);
}

/** A request asked of both phones, its push delivered to each, its notification showing on each. */
async function askBoth(command: string) {
  const from = await Promise.all([a, b].map(pushCount));
  const asked = ask(command);
  const [requestId, onB] = await Promise.all([showOn(a, from[0]!), showOn(b, from[1]!)]);
  expect(onB).toBe(requestId);
  return { answer: asked.answer, requestId };
}

describe('deciding from a notification', () => {
  it('shows the command with Approve and Deny, and denies from Deny in the service worker, which the daemon verifies', async () => {
    const { answer, requestId } = await askBoth('rm -rf build');
    const [shown] = await notificationsOf(a.browser, requestId);
    // The command itself first, then project · session · host.
    expect(shown).toMatchObject({
      title: 'rm -rf build',
      body: 'project · session- · test-box',
      tag: requestId,
    });
    expect(
      await a.browser.page.evaluate(async (tag) => {
        const [notification] = await (await navigator.serviceWorker.ready).getNotifications({ tag });
        return (notification as unknown as { actions: { action: string }[] }).actions.map((x) => x.action);
      }, requestId),
    ).toEqual(['approve', 'deny']);

    await tapNotification(a.browser, requestId, 'deny');

    // The daemon got the deny signed by Phone A's device key, verified it, and told the agent.
    expect(await answer).toMatchObject({ decision: 'deny', reason: 'latch: denied on Phone A' });
    const denied = auditLines(machine).filter(
      (line) => line['event'] === 'denied' && line['requestId'] === requestId,
    );
    expect(denied).toEqual([expect.objectContaining({ verified: true })]);
    // The notification now says what happened, and offers nothing more to do.
    expect(await notificationsOf(a.browser, requestId)).toEqual([
      expect.objectContaining({ title: 'Denied', data: expect.objectContaining({ outcome: 'denied' }) }),
    ]);
  });

  it('refuses a Deny from a notification whose request another phone already approved: already_decided, one decision', async () => {
    const { answer, requestId } = await askBoth('git push --force');
    await approvePending(b.browser, origin, /git push --force/);
    expect(await answer).toMatchObject({ decision: 'allow', reason: 'latch: approved on Phone B' });

    // Phone A never got the close (not delivered here): its notification still offers Deny.
    await tapNotification(a.browser, requestId, 'deny');
    expect(await notificationsOf(a.browser, requestId)).toEqual([
      expect.objectContaining({
        title: 'Not denied',
        data: expect.objectContaining({ outcome: 'refused', code: 'already_decided' }),
      }),
    ]);
    const decisions = auditLines(machine).filter(
      (line) =>
        line['requestId'] === requestId && (line['event'] === 'denied' || line['event'] === 'approved'),
    );
    expect(decisions.map((line) => line['event'])).toEqual(['approved']);
  });

  it('opens the request on Approve and on a plain tap, ready for Face ID, and approves nothing without it', async () => {
    const { answer, requestId } = await askBoth('npm publish');
    let settled = false;
    void answer.then(() => (settled = true));
    const decisions: string[] = [];
    const watch = (request: Request) => {
      if (/\/requests\/[^/]+\/(decision|deny)$/.test(request.url())) decisions.push(request.url());
    };
    a.browser.context.on('request', watch);

    await tapNotification(a.browser, requestId, 'approve');
    await a.browser.page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
    const approve = a.browser.page.getByRole('button', { name: 'Approve with Face ID' });
    await approve.waitFor();
    await a.browser.page.getByText('npm publish', { exact: true }).waitFor();
    expect(await notificationsOf(a.browser, requestId)).toEqual([]);

    // iOS has no actions: the tap itself. The push comes again (a second device, say).
    await parkOnDevices(a.browser);
    await deliverPush(
      a.browser,
      origin,
      (await nextPush(a, (m) => m.type === 'request' && m.requestId === requestId)).payload,
    );
    await expect.poll(() => notificationsOf(a.browser, requestId)).toHaveLength(1);
    await tapNotification(a.browser, requestId, '');
    await a.browser.page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
    await approve.waitFor();

    // Nothing was decided by the taps: the agent still waits.
    a.browser.context.off('request', watch);
    expect(decisions).toEqual([]);
    expect(settled).toBe(false);
    await approve.click();
    await a.browser.page.getByRole('status').getByText('Approved').waitFor();
    expect(await answer).toMatchObject({ decision: 'allow', reason: 'latch: approved on Phone A' });
  });

  it('asks a page the worker does not control to show the request itself', async () => {
    const { answer, requestId } = await askBoth('terraform apply');
    // DevTools' "bypass the service worker": the page loads from the network, uncontrolled.
    await a.browser.cdp.send('Network.enable');
    await a.browser.cdp.send('Network.setBypassServiceWorker', { bypass: true });
    try {
      await a.browser.page.goto(origin);
      expect(await a.browser.page.evaluate(() => navigator.serviceWorker.controller)).toBeNull();
      await a.browser.page.getByRole('button', { name: /Panic/ }).waitFor();
      await tapNotification(a.browser, requestId, 'approve');
      await a.browser.page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
      await a.browser.page.getByRole('button', { name: 'Approve with Face ID' }).waitFor();
    } finally {
      await a.browser.cdp.send('Network.setBypassServiceWorker', { bypass: false });
    }
    await a.browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await answer).toMatchObject({ decision: 'deny' });
  });

  it('says only "Approval needed on <host>" with lock-screen privacy on, and its Deny still works', async () => {
    const privacy = a.browser.page.getByRole('checkbox', { name: /Lock-screen privacy/ });
    await a.browser.page.goto(`${origin}/devices`);
    await privacy.check();
    try {
      const { answer, requestId } = await askBoth('cat ~/.ssh/id_ed25519');
      expect(await notificationsOf(a.browser, requestId)).toEqual([
        expect.objectContaining({ title: 'Approval needed on test-box', body: '' }),
      ]);
      // The setting is this phone's own: Phone B still shows the command.
      expect(await notificationsOf(b.browser, requestId)).toEqual([
        expect.objectContaining({ title: 'cat ~/.ssh/id_ed25519' }),
      ]);
      await tapNotification(a.browser, requestId, 'deny');
      expect(await answer).toMatchObject({ decision: 'deny', reason: 'latch: denied on Phone A' });
    } finally {
      await a.browser.page.goto(`${origin}/devices`);
      await privacy.uncheck();
    }
  });
});

describe('closing a notification when its request stops waiting', () => {
  it('closes it on Phone A when Phone B denies from its own notification; B, which decided, gets no close', async () => {
    const { answer, requestId } = await askBoth('docker system prune');
    await tapNotification(b.browser, requestId, 'deny');
    expect(await answer).toMatchObject({ decision: 'deny', reason: 'latch: denied on Phone B' });

    const close = await closedPush(a, requestId);
    expect(JSON.parse(close.payload)).toEqual({
      v: 1,
      type: 'closed',
      fleet: expect.any(String),
      requestId,
    });
    // A close for another request, or for another fleet's request of the same id, is not this one's.
    const { fleet } = JSON.parse(close.payload) as { fleet: string };
    await deliverPush(
      a.browser,
      origin,
      JSON.stringify({ v: 1, type: 'closed', fleet: 'another', requestId }),
    );
    await deliverPush(a.browser, origin, JSON.stringify({ v: 1, type: 'closed', fleet, requestId: 'other' }));
    // A push the worker visibly handles after those: once it shows, they were handled too.
    await deliverPush(a.browser, origin, JSON.stringify({ v: 1, type: 'summary', fleet, pending: 1 }));
    await expect.poll(() => notificationsOf(a.browser, `summary-${fleet}`)).toHaveLength(1);
    expect(await notificationsOf(a.browser, requestId)).toHaveLength(1);
    await a.browser.page.evaluate(async (tag) => {
      for (const shown of await (await navigator.serviceWorker.ready).getNotifications({ tag }))
        shown.close();
    }, `summary-${fleet}`);

    await deliverPush(a.browser, origin, close.payload);
    await expect.poll(() => notificationsOf(a.browser, requestId)).toEqual([]);
    // Phone B shows the outcome of its own deny; no close was sent to it.
    expect(await notificationsOf(b.browser, requestId)).toEqual([
      expect.objectContaining({ title: 'Denied' }),
    ]);
    const toB = (await pushService.messages(b.pushId)).map((message) => parsed(message.payload));
    expect(toB.filter((message) => message.type === 'closed' && message.requestId === requestId)).toEqual([]);
  });

  it('closes it on every phone when the request expires unanswered', async () => {
    const from = await Promise.all([a, b].map(pushCount));
    const asked = runLatch(machine, ['request', '--title', 'Rotate the keys', '--timeout', '8'], {
      timeoutMs: 60_000,
    });
    const [requestId, onB] = await Promise.all([showOn(a, from[0]!), showOn(b, from[1]!)]);
    expect(onB).toBe(requestId);
    expect(await asked).toMatchObject({ code: 1, stdout: expect.stringMatching(/^denied: expired/) });
    for (const phone of [a, b]) {
      await deliverPush(phone.browser, origin, (await closedPush(phone, requestId)).payload);
      await expect.poll(() => notificationsOf(phone.browser, requestId)).toEqual([]);
    }
  });

  it('closes a stale one when the app lists requests, as on an iPhone, which gets no close push', async () => {
    const { answer, requestId } = await askBoth('kubectl delete ns staging');
    await tapNotification(b.browser, requestId, 'deny');
    expect(await answer).toMatchObject({ decision: 'deny' });
    await closedPush(a, requestId); // sent, and not delivered: as if the phone were an iPhone
    expect(await notificationsOf(a.browser, requestId)).toHaveLength(1);

    await a.browser.page.goto(origin);
    await a.browser.page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    await expect.poll(() => notificationsOf(a.browser, requestId)).toEqual([]);
  });
});
