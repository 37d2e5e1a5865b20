import { describe, expect, it } from 'vitest';
import { MemorySingleUseStore } from '../../shared/approvals/singleUseStore.ts';

describe('MemorySingleUseStore', () => {
  let now = 0;
  const storeAt = (start: number) => {
    now = start;
    return new MemorySingleUseStore(() => now);
  };

  it('takes a key once, and refuses it while it has not expired, across its sweeps', () => {
    const store = storeAt(0);
    expect(store.consume('token', 200_000)).toBe(true);
    expect(store.consume('token', 200_000)).toBe(false);
    for (now of [60_000, 120_000, 180_000, 200_000]) expect(store.consume('token', 200_000)).toBe(false);
    expect(store.consume('other', 200_000)).toBe(true);
  });

  it('forgets a key that expired, at the first sweep a minute after the last', () => {
    const store = storeAt(0);
    store.consume('token', 1_000);
    now = 59_999;
    expect(store.consume('token', 1_000)).toBe(false);
    now = 60_000;
    expect(store.consume('token', 1_000)).toBe(true);
  });

  it('keeps a key through the moment it expires', () => {
    const store = storeAt(0);
    store.consume('token', 60_000);
    now = 60_000;
    expect(store.consume('token', 60_000)).toBe(false);
  });

  it('sweeps at most once a minute, so a key that expired since the last sweep waits for the next', () => {
    const store = storeAt(0);
    now = 60_000;
    store.consume('token', 61_000);
    now = 119_999;
    expect(store.consume('token', 61_000)).toBe(false);
    now = 120_000;
    expect(store.consume('token', 61_000)).toBe(true);
  });
});
