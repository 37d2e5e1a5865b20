import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../daemon/fallback/totp.ts';
import { callDaemon, gateCall } from '../../daemon/socket/daemonClient.ts';
import type { FallbackOffer } from '../../daemon/socket/localApi.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import {
  auditLines,
  initMachine,
  newMachine,
  pairPhoneDirectly,
  startDaemon,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';

/**
 * The terminal fallbacks, when no phone can be reached: the relay here is a closed port. A
 * fallback is offered, and answered, on the connection that asked; nowhere else.
 */

const UNREACHABLE = 'http://127.0.0.1:9';
const TOTP_SECRET = new Uint8Array(20).fill(7);

async function startFallbackHost(
  mode: 'challenge' | 'totp',
): Promise<{ machine: LatchMachine; daemon: RunningDaemon }> {
  const machine = newMachine();
  await initMachine(machine, {
    relay: UNREACHABLE,
    config: (text) => text.replace('mode = "none"', `mode = "${mode}"`),
  });
  await pairPhoneDirectly(machine, UNREACHABLE);
  if (mode === 'totp')
    writeFileSync(machine.files.totp, `${JSON.stringify({ secret: toBase64url(TOTP_SECRET) })}\n`, {
      mode: 0o600,
    });
  return { machine, daemon: await startDaemon(machine) };
}

/** Asks as an interactive caller, answering the fallback with `answer(offer)`. */
function ask(
  machine: LatchMachine,
  answer: (offer: FallbackOffer) => string | undefined,
  offers: FallbackOffer[] = [],
) {
  return gateCall(
    { agent: 'test', tool: 'deploy', title: 'deploy to prod', interactive: true, canDefer: false },
    {
      socketPath: machine.socket,
      onFallback: async (offer) => {
        offers.push(offer);
        return answer(offer);
      },
    },
  );
}

const solve = (offer: FallbackOffer) => {
  const [, a, b] = /what is (\d+) \+ (\d+)\?/.exec(offer.prompt)!;
  return String(Number(a) + Number(b));
};

describe('the local challenge', () => {
  let host: { machine: LatchMachine; daemon: RunningDaemon };
  beforeAll(async () => {
    host = await startFallbackHost('challenge');
  });
  afterAll(() => host.daemon.stop());

  it('allows on the right answer, and the audit says only what it checked', async () => {
    const offers: FallbackOffer[] = [];
    const answer = await ask(host.machine, solve, offers);
    expect(offers[0]).toMatchObject({
      method: 'challenge',
      reason: expect.stringMatching(/^relay_unreachable/),
    });
    expect(answer).toMatchObject({ decision: 'allow', via: 'challenge', requestId: offers[0]!.requestId });
    expect(auditLines(host.machine)).toContainEqual(
      expect.objectContaining({
        event: 'decided',
        requestId: offers[0]!.requestId,
        decision: 'allow',
        via: 'challenge',
        verified: 'the answer only, given on the connection that asked',
      }),
    );
  });

  it('denies a wrong answer with fallback_failed', async () => {
    const answer = await ask(host.machine, (offer) => `${Number(solve(offer)) + 1}`);
    expect(answer).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'the answer is wrong',
    });
  });

  it('denies when the asking connection gives no answer, and no other connection can give it', async () => {
    let offered: (offer: FallbackOffer) => void;
    const offer = new Promise<FallbackOffer>((resolve) => (offered = resolve));
    let decline: () => void;
    const declined = new Promise<undefined>((resolve) => (decline = () => resolve(undefined)));
    const answer = gateCall(
      { agent: 'test', tool: 'deploy', title: 'deploy', interactive: true, canDefer: false },
      {
        socketPath: host.machine.socket,
        onFallback: (fallback) => {
          offered(fallback);
          return declined;
        },
      },
    );
    const { requestId } = await offer;
    // Another process on this host tries to answer the challenge it did not ask.
    const other = await callDaemon<{ error?: { code: string } }>(
      'POST',
      '/v1/fallback',
      { requestId, answer: '12' },
      {
        socketPath: host.machine.socket,
      },
    );
    expect(other.error?.code).toBe('not_found');
    decline!();
    expect(await answer).toMatchObject({
      decision: 'deny',
      blockReason: 'relay_unreachable',
      reason: expect.stringMatching(/the terminal fallback was not answered$/),
    });
  });

  it('is never offered to a caller that cannot prompt', async () => {
    let offered = false;
    const answer = await gateCall(
      { agent: 'test', tool: 'deploy', title: 'deploy', interactive: false, canDefer: false },
      {
        socketPath: host.machine.socket,
        onFallback: async () => {
          offered = true;
          return '0';
        },
      },
    );
    expect(offered).toBe(false);
    expect(answer).toMatchObject({ decision: 'deny', blockReason: 'relay_unreachable' });
  });
});

describe('the TOTP fallback', () => {
  let host: { machine: LatchMachine; daemon: RunningDaemon };
  beforeAll(async () => {
    host = await startFallbackHost('totp');
  });
  afterAll(() => host.daemon.stop());

  const currentCode = () => totpCode(TOTP_SECRET, Math.floor(Date.now() / 30_000));

  it('allows a valid code once, and refuses the same code for the next request', async () => {
    const code = currentCode();
    expect(await ask(host.machine, () => code)).toMatchObject({ decision: 'allow', via: 'totp' });
    expect(await ask(host.machine, () => code)).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'the TOTP code is wrong or was already used',
    });
    expect(auditLines(host.machine)).toContainEqual(
      expect.objectContaining({ via: 'totp', verified: 'a TOTP code, given on the connection that asked' }),
    );
  });

  it('refuses a wrong code', async () => {
    const wrong = String((Number(currentCode()) + 1) % 1_000_000).padStart(6, '0');
    expect(await ask(host.machine, () => wrong)).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
    });
  });
});
