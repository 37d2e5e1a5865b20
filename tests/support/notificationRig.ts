import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { pushMessageSchema, type PushMessage } from '../../shared/messages/pushMessages.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import type { PairedBrowserPhone } from './browserFlows.ts';
import { deliverPush, type BrowserPhone } from './browserPhone.ts';
import { askHook, hookInput, type HookAnswer } from './latchMachine.ts';
import { ASK_EVERY_BASH_CALL, startPhoneRig, type PhoneRig } from './phoneRig.ts';
import { notificationsOf } from './serviceWorker.ts';

export const parsed = (payload: string): PushMessage => {
  const message = parseJson(pushMessageSchema, payload);
  if (!message.ok) throw new Error(`an unparsable push: ${payload}`);
  return message.value;
};

/** One host, and Phone A and Phone B, each with its push service and notifications. */
export interface NotificationRig {
  rig: PhoneRig;
  a: PairedBrowserPhone;
  b: PairedBrowserPhone;
  /**
   * The first push this phone's push service received, from its `from`-th on, that `matches`: as
   * plaintext, what the browser decrypts and hands the service worker.
   */
  nextPush(
    phone: PairedBrowserPhone,
    matches: (message: PushMessage) => boolean,
    from?: number,
  ): Promise<{ payload: string; message: PushMessage }>;
  pushCount(phone: PairedBrowserPhone): Promise<number>;
  /** The push that closes `requestId`'s notification on this phone. */
  closedPush(
    phone: PairedBrowserPhone,
    requestId: string,
  ): Promise<{ payload: string; message: PushMessage }>;
  /** Delivers a request's push to a phone parked away from the list, and waits for its notification. */
  showOn(phone: PairedBrowserPhone, from: number): Promise<string>;
  /**
   * A phone with its app open somewhere that lists no requests (the list would close stale
   * notifications itself, and hide what the push does), under the service worker's control.
   */
  parkOnDevices(phone: BrowserPhone): Promise<void>;
  /**
   * An agent's Bash call through the Claude Code hook (its own session, so the push caps never
   * bite), its push delivered to each phone, its notification showing on each.
   */
  askBoth(command: string): Promise<{ answer: Promise<HookAnswer>; requestId: string }>;
}

export async function startNotificationRig(): Promise<NotificationRig> {
  const rig = await startPhoneRig({
    name: 'notifications',
    relay: 'app-copy',
    // Every Bash call asks, at low risk (no cooling-off): the tests are about the notification.
    policy: ASK_EVERY_BASH_CALL,
    phones: ['Phone A', 'Phone B'],
  });
  const { origin, pushService, machine } = rig;
  const [a, b] = rig.phones as [PairedBrowserPhone, PairedBrowserPhone];

  const nextPush: NotificationRig['nextPush'] = async (phone, matches, from = 0) => {
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
  };
  const pushCount = async (phone: PairedBrowserPhone) => (await pushService.messages(phone.pushId)).length;
  const parkOnDevices = async (phone: BrowserPhone) => {
    await phone.page.goto(`${origin}/devices`);
    await phone.page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  };
  const showOn = async (phone: PairedBrowserPhone, from: number) => {
    const found = await nextPush(phone, (message) => message.type === 'request', from);
    if (found.message.type !== 'request') throw new Error('not a request push');
    const { requestId } = found.message;
    await parkOnDevices(phone.browser);
    await deliverPush(phone.browser, origin, found.payload);
    await expect.poll(() => notificationsOf(phone.browser, requestId)).toHaveLength(1);
    return requestId;
  };
  return {
    rig,
    a,
    b,
    nextPush,
    pushCount,
    closedPush: (phone, requestId) =>
      nextPush(phone, (message) => message.type === 'closed' && message.requestId === requestId),
    showOn,
    parkOnDevices,
    askBoth: async (command) => {
      const from = await Promise.all([a, b].map(pushCount));
      // A session of its own per command, named short: the daemon refuses ids over 256 bytes.
      const session = createHash('sha256').update(command).digest('hex').slice(0, 16);
      const input = hookInput('PreToolUse', 'Bash', { command }, { session_id: `session-${session}` });
      const answer = askHook(machine, input);
      const [requestId, onB] = await Promise.all([showOn(a, from[0]!), showOn(b, from[1]!)]);
      expect(onB).toBe(requestId);
      return { answer, requestId };
    },
  };
}
