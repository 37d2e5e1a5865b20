import type { APIResponse, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GrantsJson } from '../../daemon/cli/commands/policyGrants.ts';
import { holdPanic, openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { askHook, auditLines, hookInput, runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { ASK_EVERY_BASH_CALL, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { auditScreen, type ScreenFinding } from '../support/screenAudit.ts';
import { offWhileOffline } from '../support/oneActionAtATime.ts';

let rig: PhoneRig;
let origin: string;
let machine: LatchMachine;
let phone: PairedBrowserPhone;
const found: ScreenFinding[] = [];

beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'allow-similar',
    relay: 'app-copy',
    // Every Bash call asks, at low risk: no cooling-off stands between the person and the buttons.
    policy: ASK_EVERY_BASH_CALL,
    phones: ['Phone A'],
  });
  ({ origin, machine } = rig);
  [phone] = rig.phones as [PairedBrowserPhone];
}, 180_000);

afterAll(async () => {
  console.table(found);
  await rig?.stop();
});

/** An agent's Bash call through the Claude Code hook, in `session`. */
const ask = (command: string, session: string) =>
  askHook(machine, hookInput('PreToolUse', 'Bash', { command }, { session_id: session }));

const NO_RULES = 'None: what your policy asks about, it asks about each time.';

const grants = async () =>
  (JSON.parse((await runLatch(machine, ['policy', 'grants', '--json'])).stdout) as GrantsJson).grants;

describe('approve, and allow calls like this', () => {
  it('shows the exact rule before Face ID, approves call and rule with one Face ID, and the rule is revocable on the phone', async () => {
    const page = phone.browser.page;
    let faceIds = 0;
    (phone.browser.cdp as unknown as { on(event: string, listener: () => void): void }).on(
      'WebAuthn.credentialAsserted',
      () => faceIds++,
    );
    const first = ask('git push origin main', 'session-a');
    await openPending(phone.browser, origin, /git push origin main/);
    await page.getByRole('button', { name: 'Allow calls like this…' }).click();
    const rule = page.getByRole('group', { name: 'Approve, and allow calls like this' });
    await rule.waitFor();
    // Which agents (any: a grant names none, review kd F8), tool, command pattern, folder, the
    // policy rule it stands in for, and how long.
    for (const shown of [
      'any agent on this host, not only this one',
      'Bash',
      'git push origin ‹name›',
      '/home/dev/project',
      '“shell”',
      '30 minutes from now',
    ])
      await rule.getByText(shown, { exact: false }).first().waitFor();
    const problems = await auditScreen(page, phone.browser.cdp, 'request-allow-similar', found);

    await rule.getByRole('button', { name: 'Approve, and allow calls like this for this session' }).click();
    await page.getByRole('status').getByText('Approval sent').waitFor();
    await page.getByText(/run calls like this for this session without asking/).waitFor();
    expect(await first).toMatchObject({ permissionDecision: 'allow' });
    expect(faceIds).toBe(1);
    const [granted] = await grants();
    expect(granted).toMatchObject({ kind: 'session', tool: 'Bash', command: 'git push origin ‹name›' });
    // One token approved the call and added the rule.
    expect(
      auditLines(machine)
        .filter((line) => line['requestId'] === granted!.requestId)
        .map((line) => line['event']),
    ).toEqual(expect.arrayContaining(['approved', 'grant_added']));

    // The next similar call of this session runs with no prompt.
    expect(await ask('git push origin feature', 'session-a')).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: allowed by a rule approved on a phone (git push origin ‹name›)',
    });
    expect(faceIds).toBe(1);

    // The phone lists it, and revokes it.
    await page.goto(`${origin}/devices`);
    await page.getByRole('heading', { name: 'Rules you allowed' }).waitFor();
    const listed = page.getByRole('listitem').filter({ hasText: 'git push origin ‹name›' });
    await listed.getByText(/for this session/).waitFor();
    problems.push(...(await auditScreen(page, phone.browser.cdp, 'devices-allowed-rules', found)));
    // Named with its kind and end, apart from another of the same words.
    const revokeRule = listed.getByRole('button', {
      name: /^Revoke rule Bash git push origin ‹name›, for this session until \d{1,2}:\d{2}/,
    });
    // Offline, the revoke could not reach the relay: the button is off until it is back.
    await offWhileOffline(phone.browser, [revokeRule]);
    // A double tap revokes once.
    const revokes: string[] = [];
    const onRequest = (request: Request) => {
      if (request.url().endsWith('/grants/revoke')) revokes.push(request.url());
    };
    page.on('request', onRequest);
    await revokeRule.dblclick();
    await page
      .getByRole('status')
      .getByText(/^Revoked: Bash git push origin ‹name›, for this session until \d{1,2}:\d{2}.*\.$/)
      .waitFor();
    page.off('request', onRequest);
    expect(revokes).toHaveLength(1);
    await expect.poll(grants).toEqual([]);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'grant_revoked', grants: [granted!.id], by: 'phone', verified: true }),
    );
    await page.getByText(NO_RULES).waitFor();

    // It asks again.
    const again = ask('git push origin feature', 'session-a');
    await openPending(phone.browser, origin, /git push origin feature/);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await again).toMatchObject({ permissionDecision: 'deny' });
    expect(problems).toEqual([]);
  });

  it('says the approval was sent, and where its rule is listed, when this phone cannot keep the rule', async () => {
    const page = phone.browser.page;
    const call = ask('git fetch upstream', 'session-unlisted');
    await openPending(phone.browser, origin, /git fetch upstream/);
    // The phone's store refuses to keep the rule (storage full, or a database closed under the
    // app), after the relay took the approval.
    await page.evaluate(() => {
      const put = IDBObjectStore.prototype.put;
      IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
        if (key === 'allowed-rules')
          throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        return put.call(this, value, key);
      };
    });
    await page.getByRole('button', { name: 'Allow calls like this…' }).click();
    await page.getByRole('button', { name: 'Approve, and allow calls like this for this session' }).click();
    await page.getByRole('status').getByText('Approval sent').waitFor();
    await page
      .getByText(/could not keep the rule in its list: latch policy grants, on your computer/)
      .waitFor();
    expect(await call).toMatchObject({ permissionDecision: 'allow' });
    const [granted] = await grants();
    expect(granted).toMatchObject({ kind: 'session', command: 'git fetch upstream' });
    await runLatch(machine, ['policy', 'revoke', granted!.id]);
    await page.reload();
  });

  it('denies every request waiting from this session, one by one, and says how many', async () => {
    const page = phone.browser.page;
    const mine = [ask('make first', 'session-b'), ask('make second', 'session-b')];
    const other = ask('make third', 'session-c');
    await page.goto(origin);
    for (const title of [/make first/, /make second/, /make third/])
      await page.getByRole('button', { name: title }).first().waitFor();
    await openPending(phone.browser, origin, /make first/);
    await page.getByRole('button', { name: 'Deny all waiting from this session' }).waitFor();
    const problems = await auditScreen(page, phone.browser.cdp, 'request-deny-session', found);
    const approve = page.getByRole('button', { name: 'Approve with Face ID' });
    expect(await approve.isDisabled()).toBe(false);
    // While the denies go out, one by one, this request's Approve waits for them.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/deny', async (route) => {
      await released;
      await route.continue();
    });
    try {
      const denying = page.waitForRequest('**/deny');
      await page.getByRole('button', { name: 'Deny all waiting from this session' }).click();
      await denying;
      expect(await approve.isDisabled()).toBe(true);
    } finally {
      release();
      await page.unrouteAll({ behavior: 'wait' }); // once the held deny has gone on
    }
    await page.getByRole('status').getByText('Denied', { exact: true }).waitFor();
    await page.getByText('2 requests from this session denied.').waitFor();
    for (const answer of mine)
      expect(await answer).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: 'latch: denied on Phone A',
      });

    // Another session's request still waits.
    await openPending(phone.browser, origin, /make third/);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await other).toMatchObject({ permissionDecision: 'deny' });
    expect(problems).toEqual([]);
  });

  it('ends with a freeze: the phone marks the rule ended and keeps its revoke, and after the resume the call asks again', async () => {
    const page = phone.browser.page;
    const first = ask('git push origin main', 'session-f');
    await openPending(phone.browser, origin, /git push origin main/);
    await page.getByRole('button', { name: 'Allow calls like this…' }).click();
    await page.getByRole('button', { name: 'Approve, and allow calls like this for 30 minutes' }).click();
    expect(await first).toMatchObject({ permissionDecision: 'allow' });
    expect(await grants()).toHaveLength(1);

    // A poll that set out before the panic and is answered after it ("armed") is not shown.
    await page.goto(origin);
    await page.getByText(/^Armed/).waitFor();
    let staleAnswer: Promise<APIResponse> | undefined;
    let releaseStale!: () => void;
    const staleReleased = new Promise<void>((resolve) => (releaseStale = resolve));
    let staleHeld!: () => void;
    const held = new Promise<void>((resolve) => (staleHeld = resolve));
    await page.route('**/state', async (route) => {
      if (staleAnswer || route.request().method() !== 'GET') return route.continue();
      staleAnswer = route.fetch(); // the relay's answer now, while the fleet is armed
      staleHeld();
      await staleReleased;
      await route.fulfill({ response: await staleAnswer });
    });
    try {
      await held;
      await holdPanic(phone.browser);
      await page.getByText('Frozen. Every agent is stopped.').waitFor();
      await page.getByText(/^FROZEN/).waitFor();
      releaseStale();
      const shownArmed = await page
        .getByText(/^Armed/)
        .waitFor({ timeout: 2_000 })
        .then(
          () => true,
          () => false,
        );
      expect(shownArmed).toBe(false);
    } finally {
      releaseStale();
      await page.unrouteAll({ behavior: 'wait' });
    }
    await expect.poll(grants).toEqual([]);
    await page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
    await page.getByText(/^Armed/).waitFor();
    await page.goto(`${origin}/devices`);
    const listed = page.getByRole('listitem').filter({ hasText: 'git push origin ‹name›' });
    await listed
      .getByText(/^Ended by the freeze of .+, as the relay says\. Revoke it to be sure\.$/)
      .waitFor();
    await listed
      .getByRole('button', { name: /^Revoke rule Bash git push origin ‹name›, for 30 minutes until / })
      .click();
    await page.getByText(NO_RULES).waitFor();

    const again = ask('git push origin feature', 'session-f');
    await openPending(phone.browser, origin, /git push origin feature/);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await again).toMatchObject({ permissionDecision: 'deny' });
  });

  it('keeps a live rule revocable when the relay tells this phone alone that the fleet is frozen', async () => {
    const page = phone.browser.page;
    const first = ask('git push origin main', 'session-g');
    await openPending(phone.browser, origin, /git push origin main/);
    await page.getByRole('button', { name: 'Allow calls like this…' }).click();
    await page.getByRole('button', { name: 'Approve, and allow calls like this for 30 minutes' }).click();
    expect(await first).toMatchObject({ permissionDecision: 'allow' });

    // The relay says "frozen" to the phone, and to no host: the rule still holds there.
    await page.route('**/state', async (route) => {
      const answer = await route.fetch();
      const state = (await answer.json()) as Record<string, unknown>;
      await route.fulfill({ response: answer, json: { ...state, frozen: true, reason: 'a relay says so' } });
    });
    try {
      await page.goto(origin);
      // No signed freeze: no reason is given (the relay's own is not shown as one).
      await page.getByRole('alert').filter({ hasText: 'FROZEN, reason given: none' }).waitFor();
    } finally {
      await page.unroute('**/state');
    }
    expect(await grants()).toHaveLength(1);

    await page.goto(`${origin}/devices`);
    const listed = page.getByRole('listitem').filter({ hasText: 'git push origin ‹name›' });
    await listed.getByText(/^Ended by the freeze of/).waitFor();
    await listed
      .getByRole('button', { name: /^Revoke rule Bash git push origin ‹name›, for 30 minutes until / })
      .click();
    await page.getByText(NO_RULES).waitFor();
    await expect.poll(grants).toEqual([]);
  });
});
