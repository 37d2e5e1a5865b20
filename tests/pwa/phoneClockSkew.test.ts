import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askHook, hookInput } from '../support/latchMachine.ts';
import { ASK_EVERY_BASH_CALL, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';

/**
 * A phone whose clock is 5 minutes ahead of the relay's (docs/security.md#clocks): the relay takes
 * its signed calls only within ±60 s, so the phone can do nothing, says why, and the call it
 * could not approve is denied at the host's deadline. The phone's clock is moved in the page.
 */
const SKEW_MS = 5 * 60_000;

let rig: PhoneRig;

beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'phone-clock',
    relay: 'plain',
    policy: ASK_EVERY_BASH_CALL,
    phones: ['Phone A'],
    // Long enough to open the app, short enough to wait out.
    config: (text) => text.replace('timeout_seconds = 300', 'timeout_seconds = 30'),
  });
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

describe('a phone whose clock is 5 minutes ahead', () => {
  it('is refused by the relay and says its clock is off; the call is denied at the host’s deadline', async () => {
    const [{ browser }] = rig.phones as [(typeof rig.phones)[0]];
    await browser.context.addInitScript({
      content: `{ const realNow = Date.now; Date.now = () => realNow() + ${SKEW_MS}; }`,
    });
    const hook = askHook(rig.machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }));
    await browser.page.goto(rig.origin);
    await browser.page
      .getByText('This phone’s clock is more than a minute off: set it to the network time.')
      .waitFor();
    await browser.screenshot('clock-ahead');
    expect(await browser.page.getByRole('button', { name: /rm -rf build/ }).count()).toBe(0);
    expect(await hook).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: 'latch: expired: no phone answered before the deadline',
    });
  });
});
