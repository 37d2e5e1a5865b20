import type { PushSubscriptionJson } from '../../shared/messages/common.ts';
import type { VapidClaims } from './vapid.ts';

/** A push message as the stand-in received it: decrypted, with what its headers said. */
export interface ReceivedPush {
  subscription: string;
  payload: string;
  receivedAt: number;
  claims: VapidClaims;
  ttl: string | null;
  urgency: string | null;
}

/** Talks to the push stand-in from a test, in Node or in workerd. */
export class PushServiceClient {
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  async subscribe(): Promise<{ id: string; subscription: PushSubscriptionJson }> {
    const { id, endpoint, keys } = (await (
      await fetch(`${this.url}/subscriptions`, { method: 'POST' })
    ).json()) as {
      id: string;
      endpoint: string;
      keys: PushSubscriptionJson['keys'];
    };
    return { id, subscription: { endpoint, keys } };
  }

  async messages(id: string): Promise<ReceivedPush[]> {
    return (await (await fetch(`${this.url}/subscriptions/${id}/messages`)).json()) as ReceivedPush[];
  }

  /** Waits until `count` messages arrived (pushes leave the relay in the background). */
  async waitForMessages(id: string, count: number, timeoutMs = 5000): Promise<ReceivedPush[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const messages = await this.messages(id);
      if (messages.length >= count || Date.now() > deadline) return messages;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async markGone(id: string): Promise<void> {
    await fetch(`${this.url}/subscriptions/${id}/gone`, { method: 'POST' });
  }

  async rejected(): Promise<string[]> {
    return (await (await fetch(`${this.url}/rejected`)).json()) as string[];
  }
}
