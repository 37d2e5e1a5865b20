import { describe, expect, it } from 'vitest';
import {
  connectivity,
  connectivityMark,
  relayReached,
  relayUnreachable,
} from '../../pwa/src/connectivity.ts';

describe("the app's link to its relay", () => {
  it('is not brought back by an answer to a call that set out before the link was lost', () => {
    const markBeforeLoss = connectivityMark();
    relayUnreachable(); // the phone says it went offline while that call was on its way
    relayReached(markBeforeLoss);
    expect(connectivity().offline).toBe(true);

    // A call made after the loss that is answered proves the relay is reachable again.
    relayReached(connectivityMark());
    expect(connectivity()).toEqual({ offline: false, knownAt: undefined });
  });

  it('is not brought back by an answer while the phone says it has no network', () => {
    const own = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    const phone = { onLine: false };
    Object.defineProperty(globalThis, 'navigator', { value: phone, configurable: true });
    try {
      relayUnreachable();
      // Answered all the same: the network went a moment after the phone said so.
      relayReached(connectivityMark());
      expect(connectivity().offline).toBe(true);

      phone.onLine = true;
      relayReached(connectivityMark());
      expect(connectivity().offline).toBe(false);
    } finally {
      if (own) Object.defineProperty(globalThis, 'navigator', own);
      else delete (globalThis as { navigator?: unknown }).navigator;
    }
  });
});
