import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { ApprovalRequest, RequestDetails } from '../../shared/messages/approvals.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { revokeChallenge } from '../../shared/device-auth/revokeChallenge.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { DevicesJson } from '../../daemon/cli/commands/devices.ts';
import { conversationId } from '../../daemon/gate/conversationId.ts';
import type { DoctorJson } from '../../daemon/cli/commands/doctor.ts';
import type { GrantsJson } from '../../daemon/cli/commands/policyGrants.ts';
import {
  auditLines,
  hookInput,
  runLatch,
  startHook,
  withStore,
  type LatchMachine,
} from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import type { Ceremony } from '../../scripts/lib/softwareAuthenticator.ts';
import {
  audited,
  fleetOf,
  sendFreeze,
  sendVotes,
  signFreeze,
  statusCode,
  vote,
} from '../support/killSwitchRelay.ts';
import { movedClock } from '../support/movedClock.ts';
import {
  framesHandled,
  restartDaemon,
  startPairedDaemon,
  type PairedDaemon,
} from '../support/pairedDaemon.ts';
import type { RequestAnswer, StandInRelay } from '../support/standInRelay.ts';

let paired: PairedDaemon;
let relay: StandInRelay;
let machine: LatchMachine;
let phone: TestPhone;

beforeAll(async () => {
  paired = await startPairedDaemon({
    config: (text) => text.replace('timeout_seconds = 300', 'timeout_seconds = 8'),
    // The second is revoked on this host by one test, the third in the app by others.
    phones: 3,
  });
  ({ relay, machine } = paired);
  [phone] = paired.phones;
});

afterAll(() => paired.stop());

const bash = (command: string, session = 'session-1') =>
  hookInput('PreToolUse', 'Bash', { command }, { session_id: session });

/** Runs a hook and, when it asks a phone, hands the test the request it sent. */
async function asking(
  input: string,
): Promise<{ request: ApprovalRequest; hook: ReturnType<typeof startHook> }> {
  const before = relay.requests.length;
  const hook = startHook(machine, input);
  return { request: await relay.nextRequest(before), hook };
}

/** Ends an asked call at once (the relay's expiry): the test only needed to see that it asked. */
async function expire(asked: { request: ApprovalRequest; hook: ReturnType<typeof startHook> }) {
  relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: asked.request.requestId, at: Date.now() });
  expect((await asked.hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
}

/** Runs a hook that a grant should allow: it must answer without any request reaching the relay. */
async function allowedWithoutPhone(input: string) {
  const before = relay.requests.length;
  const { output } = await startHook(machine, input);
  expect(relay.requests.length).toBe(before);
  return output;
}

const grantsJson = async () =>
  JSON.parse((await runLatch(machine, ['policy', 'grants', '--json'])).stdout) as GrantsJson;

/** Approves `git push` in `session` with `grant`, as the phone's "Approve, and allow calls like this". */
async function grantGitPush(grant: 'half_hour' | 'session', session = 'session-1', by = phone) {
  const asked = await asking(bash('git push origin main', session));
  const { token, details } = await phoneApproves(by, asked.request, relay.origin, { grant });
  relay.sendApproval(asked.request.requestId, token);
  expect((await asked.hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
  return details;
}

describe('allow calls like this', () => {
  it('offers the narrow rule in the sealed details, so the signature commits to it', async () => {
    const asked = await asking(bash('git push origin main'));
    const { details } = await phoneApproves(phone, asked.request, relay.origin);
    expect(details.similar).toEqual({
      tool: 'Bash',
      words: ['git', 'push', 'origin'],
      thenAnyName: true,
      folder: '/home/dev/project',
      policyRule: 'network writes and publishing',
      // The host's own id for the session, sealed; the relay sees another, keyed (callIds).
      conversation: conversationId('session-1'),
    });
    expect(asked.request.conversation).not.toBe(conversationId('session-1'));
    await expire(asked);
  });

  it('for 30 minutes: the next similar call runs without the phone, audited; a dissimilar one still asks', async () => {
    await grantGitPush('half_hour');
    const [grant] = (await grantsJson()).grants;
    expect(grant).toMatchObject({
      kind: 'half_hour',
      tool: 'Bash',
      command: 'git push origin ‹name›',
      session: null,
    });

    // Any session of this host, in the same folder.
    const output = await allowedWithoutPhone(bash('git push origin feature/x', 'session-9'));
    expect(output).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: 'allow',
        permissionDecisionReason: 'latch: allowed by a rule approved on a phone (git push origin ‹name›)',
      },
    });
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'allowed',
        via: 'grant',
        grant: grant!.id,
        command: 'git push origin feature/x',
      }),
    );
    await expire(await asking(bash('git push --force origin main')));
    await expire(await asking(bash('git push origin main; rm -rf ~')));
    await expire(await asking(bash('npm publish')));
    await expire(
      await asking(
        hookInput('PreToolUse', 'Bash', { command: 'git push origin main' }, { cwd: '/home/dev/other' }),
      ),
    );

    await runLatch(machine, ['policy', 'revoke', '--all']);
  });

  it('for this session: other sessions still ask', async () => {
    await grantGitPush('session', 'session-2');
    expect((await grantsJson()).grants).toEqual([expect.objectContaining({ kind: 'session' })]);
    await allowedWithoutPhone(bash('git push origin feature/y', 'session-2'));
    await expire(await asking(bash('git push origin feature/y', 'session-3')));
    await runLatch(machine, ['policy', 'revoke', '--all']);
  });

  it('lapses at its time', async () => {
    await grantGitPush('half_hour');
    await allowedWithoutPhone(bash('git push origin feature/y'));
    // Half an hour passes: the grant's deadline is now behind it.
    withStore(machine, (store) => store.db.prepare('UPDATE grants SET expires_at = ?').run(Date.now() - 1));
    expect((await grantsJson()).grants).toEqual([]);
    await expire(await asking(bash('git push origin feature/y')));
  });
});

describe('latch policy', () => {
  it('revokes one grant by id, without a phone; the next call asks again', async () => {
    await grantGitPush('half_hour');
    const [grant] = (await grantsJson()).grants;
    const revoked = await runLatch(machine, ['policy', 'revoke', grant!.id, '--json']);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ grants: [], revoked: [grant!.id] });
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'grant_revoked', grants: [grant!.id], by: 'host', verified: true }),
    );
    await expire(await asking(bash('git push origin feature/y')));
  });

  it('says so, exiting 1, for an id no grant in force has; and 2 without an id or --all', async () => {
    const unknown = await runLatch(machine, ['policy', 'revoke', 'no-such-grant']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no rule in force has the id no-such-grant');
    expect((await runLatch(machine, ['policy', 'revoke'])).code).toBe(2);
  });
});

describe('what ends every grant it touches', () => {
  it('a freeze ends them all, and the resume brings none back', async () => {
    // The session grant first: the half-hour one would cover its call.
    await grantGitPush('session', 'session-5');
    await grantGitPush('half_hour');
    const granted = (await grantsJson()).grants.map(({ id }) => id);
    expect(granted).toHaveLength(2);

    const envelope = await signFreeze(machine, phone);
    sendFreeze(relay, envelope, 1);
    await expect.poll(async () => (await grantsJson()).grants).toEqual([]);
    expect(audited(machine, 'grant_revoked')).toContainEqual(
      expect.objectContaining({ grants: expect.arrayContaining(granted), by: 'freeze' }),
    );

    const freeze = await freezeId(envelope);
    sendVotes(relay, freeze, [await vote(machine, relay, phone, freeze)]);
    await expect.poll(() => statusCode(machine)).toBe(0);
    expect((await grantsJson()).grants).toEqual([]);
    await expire(await asking(bash('git push origin feature/y')));
    await expire(await asking(bash('git push origin feature/y', 'session-5')));
  });

  it('a report of the request that allowed one ends it, and every rule approved in its session', async () => {
    await grantGitPush('session', 'session-7');
    const reported = await grantGitPush('half_hour', 'session-8');
    const [kept, ended] = (await grantsJson()).grants;
    expect(kept).toMatchObject({ kind: 'session' });

    await relay.sendDenial(phone, reported, 'session');
    await expect.poll(async () => (await grantsJson()).grants).toEqual([kept]);
    expect(audited(machine, 'grant_revoked')).toContainEqual(
      expect.objectContaining({ grants: [ended!.id], by: 'report', requestId: reported.requestId }),
    );
    await expire(await asking(bash('git push origin feature/y', 'session-9')));
    await runLatch(machine, ['policy', 'revoke', '--all']);
  });

  it('revoking the phone on this host ends the rules it allowed', async () => {
    const [, spare] = paired.phones;
    await grantGitPush('half_hour', 'session-1', spare);
    const [grant] = (await grantsJson()).grants;

    expect((await runLatch(machine, ['devices', '--revoke', spare!.id])).code).toBe(0);
    expect((await grantsJson()).grants).toEqual([]);
    expect(audited(machine, 'grant_revoked')).toContainEqual(
      expect.objectContaining({ grants: [grant!.id], by: 'host', device: spare!.id }),
    );
    await expire(await asking(bash('git push origin feature/y')));
  });
});

describe('what a freeze or a report ends, whatever the order the relay delivers in', () => {
  const deniedWith = (reason: RegExp) => ({
    hookSpecificOutput: {
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(reason),
    },
  });
  const freezeAndResume = async () => {
    const envelope = await signFreeze(machine, phone);
    sendFreeze(relay, envelope, 1);
    await expect.poll(() => statusCode(machine)).not.toBe(0);
    const freeze = await freezeId(envelope);
    sendVotes(relay, freeze, [await vote(machine, relay, phone, freeze)]);
    await expect.poll(() => statusCode(machine)).toBe(0);
  };
  afterEach(() => {
    relay.answerRequest = undefined;
  });

  it('a freeze, resumed before the relay answered the POST: the approval that follows adds no rule, and nothing runs', async () => {
    const held = relay.holdReplies();
    const asked = await asking(bash('git push origin main', 'session-20'));
    await freezeAndResume();
    const { token } = await phoneApproves(phone, asked.request, relay.origin, { grant: 'half_hour' });
    relay.sendApproval(asked.request.requestId, token);
    await framesHandled(machine, relay);
    held.reply();
    expect((await asked.hook).output).toMatchObject(deniedWith(/^latch: kill_switch: the fleet was frozen/));
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'token_refused',
        requestId: asked.request.requestId,
        code: 'withdrawn',
      }),
    );
    expect((await grantsJson()).grants).toEqual([]);
  });

  it('a freeze after an early approval, resumed before the relay answered the POST: the approval is not given', async () => {
    const held = relay.holdReplies();
    const asked = await asking(bash('git push origin main', 'session-21'));
    const { token } = await phoneApproves(phone, asked.request, relay.origin, { grant: 'half_hour' });
    relay.sendApproval(asked.request.requestId, token);
    await expect.poll(async () => (await grantsJson()).grants).toHaveLength(1);
    await freezeAndResume();
    held.reply();
    expect((await asked.hook).output).toMatchObject(deniedWith(/^latch: kill_switch: the fleet was frozen/));
    expect((await grantsJson()).grants).toEqual([]);
  });

  it.each([
    ['names a request this host did not make', { requestId: 'an-id-the-relay-made-up', joined: false }],
    ['is no answer a daemon can read', {}],
  ])(
    'an early approval, then the relay’s answer to the POST %s: the approval is not kept as given, nor its rule',
    async (_, answer) => {
      let answerThePost = () => {};
      relay.answerRequest = () =>
        new Promise((resolve) => (answerThePost = () => resolve(answer as RequestAnswer)));
      const asked = await asking(bash('git push origin main', 'session-25'));
      const { requestId } = asked.request;
      const { token } = await phoneApproves(phone, asked.request, relay.origin, { grant: 'half_hour' });
      relay.sendApproval(requestId, token);
      await expect.poll(async () => (await grantsJson()).grants).toHaveLength(1);
      answerThePost();
      expect((await asked.hook).output).toMatchObject(deniedWith(/^latch: relay_unreachable: /));
      expect((await grantsJson()).grants).toEqual([]);
      const lines = auditLines(machine).filter((line) => line['requestId'] === requestId);
      // Approved first, then undone: the audit says the deny the agent was given.
      const events = lines.map((line) => line['event']);
      expect(events).toEqual(expect.arrayContaining(['approved', 'grant_added', 'grant_revoked']));
      const undone = lines.findIndex((line) => line['event'] === 'decided');
      expect(undone).toBeGreaterThan(events.indexOf('approved'));
      expect(lines[undone]).toMatchObject({
        decision: 'deny',
        reason: expect.stringMatching(/^relay_unreachable: /),
      });
    },
  );

  it('an early approval whose request is pruned before the relay answers the POST: its rule is revoked all the same', async () => {
    let answerThePost = () => {};
    relay.answerRequest = () =>
      new Promise((resolve) => (answerThePost = () => resolve({} as RequestAnswer)));
    const asked = await asking(bash('git push origin main', 'session-26'));
    const { requestId } = asked.request;
    const { token } = await phoneApproves(phone, asked.request, relay.origin, { grant: 'half_hour' });
    relay.sendApproval(requestId, token);
    await expect.poll(async () => (await grantsJson()).grants).toHaveLength(1);
    // As `[retention]` does once its deadline has passed (requests_days, max_requests).
    withStore(machine, (store) =>
      store.db.prepare('DELETE FROM requests WHERE request_id = ?').run(requestId),
    );
    answerThePost();
    expect((await asked.hook).output).toMatchObject(deniedWith(/^latch: relay_unreachable: /));
    expect((await grantsJson()).grants).toEqual([]);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'grant_revoked', requestId, by: 'host' }),
    );
  });

  it('a report of a session refuses its other request still waiting: the approval that follows adds no rule', async () => {
    const reported = await asking(bash('git push origin main', 'session-22'));
    const other = await asking(bash('git push origin feature/z', 'session-22'));
    const { token } = await phoneApproves(phone, other.request, relay.origin, { grant: 'half_hour' });
    await relay.sendDenial(phone, reported.request, 'session');
    expect((await other.hook).output).toMatchObject(deniedWith(/^latch: reported: /));
    relay.sendApproval(other.request.requestId, token);
    await framesHandled(machine, relay);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'token_refused',
        requestId: other.request.requestId,
        code: 'withdrawn',
      }),
    );
    expect((await grantsJson()).grants).toEqual([]);
    expect((await reported.hook).output).toMatchObject(deniedWith(/^latch: denied on /));
  });

  it('a report of a session after an early approval of its other request: the approval is not given', async () => {
    const reported = await asking(bash('git push origin main', 'session-23'));
    const held = relay.holdReplies();
    const other = await asking(bash('git push origin feature/z', 'session-23'));
    const { token } = await phoneApproves(phone, other.request, relay.origin, { grant: 'half_hour' });
    relay.sendApproval(other.request.requestId, token);
    await expect.poll(async () => (await grantsJson()).grants).toHaveLength(1);
    await relay.sendDenial(phone, reported.request, 'session');
    await expect.poll(async () => (await grantsJson()).grants).toEqual([]);
    held.reply();
    expect((await other.hook).output).toMatchObject(deniedWith(/^latch: reported: /));
    expect((await reported.hook).output).toMatchObject(deniedWith(/^latch: denied on /));
  });
});

describe('every caller gone while the relay still holds the POST', () => {
  const hooks: ChildProcess[] = [];
  afterEach(() => {
    relay.answerRequest = undefined;
    for (const hook of hooks.splice(0)) hook.kill('SIGKILL');
  });

  /** `latch hook claude-code` asking the phones, and the request it sent, for the test to kill. */
  async function hookToKill(input: string): Promise<{ request: ApprovalRequest; hook: ChildProcess }> {
    const before = relay.requests.length;
    const hook = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code'], {
      env: machine.env,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    hooks.push(hook);
    hook.stdin!.end(input);
    return { request: await relay.nextRequest(before), hook };
  }
  const linesOf = (requestId: string) =>
    auditLines(machine).filter((line) => line['requestId'] === requestId);

  it('withdraws the request at once: an approval that comes after adds no rule, refused as withdrawn', async () => {
    const held = relay.holdReplies();
    const { request, hook } = await hookToKill(bash('git push origin main', 'session-40'));
    hook.kill('SIGKILL');
    await expect
      .poll(() => linesOf(request.requestId).filter((line) => line['event'] === 'withdrawn'))
      .toEqual([expect.objectContaining({ why: 'caller_gone' })]);
    const { token } = await phoneApproves(phone, request, relay.origin, { grant: 'half_hour' });
    relay.sendApproval(request.requestId, token);
    await framesHandled(machine, relay);
    expect(linesOf(request.requestId)).toContainEqual(
      expect.objectContaining({ event: 'token_refused', code: 'withdrawn' }),
    );
    expect((await grantsJson()).grants).toEqual([]);
    held.reply();
    // The relay hears of it once it has answered the POST.
    await relay.waitFor(() => relay.withdrawals.includes(request.requestId));
    const events = linesOf(request.requestId).map((line) => line['event']);
    expect(events).not.toContain('approved');
    expect(events).not.toContain('grant_added');
  });

  it('undoes an approval a phone gave early: its rule is revoked, and the same call later asks again', async () => {
    const held = relay.holdReplies();
    const input = bash('git push origin main', 'session-41');
    const { request, hook } = await hookToKill(input);
    const { token } = await phoneApproves(phone, request, relay.origin, { grant: 'half_hour' });
    relay.sendApproval(request.requestId, token);
    await expect.poll(async () => (await grantsJson()).grants).toHaveLength(1);
    hook.kill('SIGKILL');
    // At once, long before the relay's POST would time out.
    await expect.poll(async () => (await grantsJson()).grants, { timeout: 3000 }).toEqual([]);
    held.reply();
    relay.answerRequest = undefined;
    const lines = linesOf(request.requestId);
    expect(lines).toContainEqual(expect.objectContaining({ event: 'grant_revoked', by: 'host' }));
    const undone = lines.findIndex((line) => line['event'] === 'decided');
    expect(undone).toBeGreaterThan(lines.findIndex((line) => line['event'] === 'approved'));
    expect(lines[undone]).toMatchObject({
      decision: 'deny',
      reason: 'withdrawn: every caller stopped waiting',
    });
    // Nothing of the approval is left to allow the call: made again, it asks the phones.
    await expire(await asking(input));
  });
});

describe('a phone revokes a rule it allowed', () => {
  /** The envelope the phone's "Revoke" sends, signed with `signer`'s device key. */
  const revokeEnvelope = async (details: RequestDetails, signer: TestPhone) =>
    signEnvelope(
      'revoke-grant',
      { fleet: details.fleet, host: details.host, requestId: details.requestId },
      { role: 'device', id: phone.id },
      signer.deviceKeys.privateKey,
    );

  it('with a signed envelope the relay carries: the next call asks again', async () => {
    const details = await grantGitPush('half_hour');
    const [grant] = (await grantsJson()).grants;
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'grant_revoked',
      envelope: await revokeEnvelope(details, phone),
      at: Date.now(),
    });
    await expect.poll(async () => (await grantsJson()).grants).toEqual([]);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'grant_revoked', grants: [grant!.id], by: 'phone', verified: true }),
    );
    await expire(await asking(bash('git push origin feature/y')));
  });

  it('before the relay delivers the approval that brings it: the call is given, the rule never comes', async () => {
    const asked = await asking(bash('git push origin main', 'session-30'));
    const { token, details } = await phoneApproves(phone, asked.request, relay.origin, {
      grant: 'half_hour',
    });
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'grant_revoked',
      envelope: await revokeEnvelope(details, phone),
      at: Date.now(),
    });
    await framesHandled(machine, relay);
    relay.sendApproval(asked.request.requestId, token);
    expect((await asked.hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    expect((await grantsJson()).grants).toEqual([]);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'grant_refused', requestId: asked.request.requestId }),
    );
    await expire(await asking(bash('git push origin other-branch', 'session-31')));
  });

  it('nor after `latch policy revoke --all` at the terminal, while the relay held the approval', async () => {
    const asked = await asking(bash('git push origin main', 'session-32'));
    const { token } = await phoneApproves(phone, asked.request, relay.origin, { grant: 'half_hour' });
    expect((await runLatch(machine, ['policy', 'revoke', '--all'])).code).toBe(0);
    relay.sendApproval(asked.request.requestId, token);
    expect((await asked.hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    expect((await grantsJson()).grants).toEqual([]);
  });

  it('even unverified, since revoking only tightens; the audit says it did not verify', async () => {
    const details = await grantGitPush('half_hour');
    const forger = await createPhone('Relay’s own key');
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'grant_revoked',
      envelope: await revokeEnvelope(details, forger),
      at: Date.now(),
    });
    await expect.poll(async () => (await grantsJson()).grants).toEqual([]);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'grant_revoked',
        requestId: details.requestId,
        by: 'phone',
        verified: false,
      }),
    );
  });
});

describe('a phone revoked in the app', () => {
  const devicesJson = async () =>
    (JSON.parse((await runLatch(machine, ['devices', '--json'])).stdout) as DevicesJson).devices;
  const revokedHere = async (device: string) =>
    (await devicesJson()).find((each) => each.id === device)?.revoked;

  /** The revoke the relay passes on: `by`'s assertion over revokeChallenge for `challengeFor`. */
  async function sendRevoke(
    device: string,
    by: TestPhone,
    options: { challengeFor?: string; claimedBy?: string; ceremony?: Partial<Ceremony> } = {},
  ) {
    const assertion = await by.authenticator.assert({
      rpId: new URL(relay.origin).hostname,
      origin: relay.origin,
      challenge: await revokeChallenge({ fleet: fleetOf(machine), device: options.challengeFor ?? device }),
      ...options.ceremony,
    });
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'device_revoked',
      device,
      by: options.claimedBy ?? by.id,
      assertion,
      at: Date.now(),
    });
    await framesHandled(machine, relay);
  }

  it('stays trusted here while the assertion does not verify, each refusal audited with its code', async () => {
    const [, , lost] = paired.phones;
    const forger = await createPhone('Relay’s own passkey');
    const refusals: [Parameters<typeof sendRevoke>, string][] = [
      [[lost!.id, phone, { challengeFor: paired.phones[1]!.id }], 'challenge_mismatch'],
      [[lost!.id, forger], 'unknown_credential'],
      // A genuine phone's assertion, said to be another's: its credential is not that phone's.
      [[lost!.id, forger, { claimedBy: phone.id }], 'unknown_credential'],
      [[lost!.id, phone, { ceremony: { userVerified: false } }], 'user_not_verified'],
      [[lost!.id, phone, { ceremony: { origin: 'https://evil.example' } }], 'origin_mismatch'],
    ];
    for (const [[device, by, options], code] of refusals) {
      await sendRevoke(device, by, options);
      expect(await revokedHere(lost!.id)).toBe(false);
      expect(audited(machine, 'device_revoke_refused').at(-1)).toMatchObject({ device: lost!.id, code });
    }
  });

  it('by a phone not paired here: its rules end all the same, its trust stays, and latch devices says how to end it', async () => {
    const [, , lost] = paired.phones;
    await grantGitPush('half_hour', 'session-1', lost);
    const [grant] = (await grantsJson()).grants;
    // Phone C is in the fleet, paired with another host only: its Face ID cannot be checked here.
    const elsewhere = await createPhone('Phone C (another host)');
    await sendRevoke(lost!.id, elsewhere);

    expect(await revokedHere(lost!.id)).toBe(false);
    expect((await grantsJson()).grants).toEqual([]);
    expect(audited(machine, 'grant_revoked').at(-1)).toMatchObject({
      grants: [grant!.id],
      device: lost!.id,
      by: 'phone',
      phone: elsewhere.id,
      verified: false,
    });
    const asked = await asking(bash('git push origin feature'));
    await expire(asked);

    const listed = (await devicesJson()).find((each) => each.id === lost!.id);
    expect(listed?.revokeAsked).toMatchObject({ by: elsewhere.id });
    const text = (await runLatch(machine, ['devices'])).stdout;
    expect(text).toContain(
      `a revoke of it was asked in the app by ${elsewhere.id}, a phone not paired here: its rules ended, this host still trusts it; to end that, latch devices --revoke ${lost!.id}; if you did not ask it, latch devices --keep ${lost!.id}`,
    );
    expect((await runLatch(machine, ['status'])).stdout).toContain('a revoke of 1 asked in the app');
    const doctor = JSON.parse((await runLatch(machine, ['doctor', '--json'])).stdout) as DoctorJson;
    expect(doctor.checks).toContainEqual(
      expect.objectContaining({
        name: 'revoke asked in the app',
        ok: false,
        fix: `latch devices --revoke ${lost!.id} if you asked it; latch devices --keep ${lost!.id} if not`,
      }),
    );
    // Review rv7: a relay can make the mark up, and revoking is the person's to choose, not the
    // only way to a passing doctor. Keeping the phone forgets the mark, and nothing else.
    expect((await runLatch(machine, ['devices', '--keep', lost!.id])).code).toBe(0);
    expect((await devicesJson()).find((each) => each.id === lost!.id)).toMatchObject({ revoked: false });
    expect((await devicesJson()).find((each) => each.id === lost!.id)?.revokeAsked).toBeUndefined();
    const after = JSON.parse((await runLatch(machine, ['doctor', '--json'])).stdout) as DoctorJson;
    expect(after.checks.map((check) => check.name)).not.toContain('revoke asked in the app');
    expect(audited(machine, 'revoke_asked_dismissed').at(-1)).toMatchObject({ device: lost!.id });
    const again = await runLatch(machine, ['devices', '--keep', lost!.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('has a revoke asked in the app');
  });

  it('is revoked here once the revoking phone’s assertion verifies, with the rules it allowed', async () => {
    const [, , lost] = paired.phones;
    // The revoking phone approves here (its passkey's counter at 1 or more), then its revoke
    // arrives signed at 1: a revoke can reach a host after approvals made later.
    const approved = await asking(bash('git push origin main'));
    const { token } = await phoneApproves(phone, approved.request, relay.origin);
    relay.sendApproval(approved.request.requestId, token);
    expect((await approved.hook).output).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    await grantGitPush('half_hour', 'session-1', lost);
    const [grant] = (await grantsJson()).grants;
    await sendRevoke(lost!.id, phone, { ceremony: { counter: 1 } });
    expect(await revokedHere(lost!.id)).toBe(true);
    expect((await grantsJson()).grants).toEqual([]);
    expect(audited(machine, 'device_revoked')).toContainEqual(
      expect.objectContaining({ device: lost!.id, by: 'phone', phone: phone.id }),
    );
    expect(audited(machine, 'grant_revoked')).toContainEqual(
      expect.objectContaining({ grants: [grant!.id], by: 'phone', phone: phone.id, device: lost!.id }),
    );
    // The next request is sealed for the phones still trusted, and no longer for it.
    const asked = await asking(bash('git push origin main'));
    const sealedFor = asked.request.sealed.map((sealed) => sealed.device);
    expect(sealedFor).toContain(phone.id);
    expect(sealedFor).not.toContain(lost!.id);
    await expire(asked);
  });
});

describe('a grant is honoured only as the phone signed it', () => {
  it('refuses a token whose grant was added after signing (challenge_mismatch)', async () => {
    const asked = await asking(bash('git push origin main'));
    const { token } = await phoneApproves(phone, asked.request, relay.origin);
    relay.sendApproval(asked.request.requestId, { ...token, grant: 'half_hour' });
    await expect
      .poll(() => auditLines(machine))
      .toContainEqual(
        expect.objectContaining({
          event: 'token_refused',
          requestId: asked.request.requestId,
          code: 'challenge_mismatch',
        }),
      );
    await expire(asked);
    expect((await grantsJson()).grants).toEqual([]);
  });

  it('refuses a token whose grant was changed after signing (challenge_mismatch)', async () => {
    const asked = await asking(bash('git push origin main', 'session-4'));
    const { token } = await phoneApproves(phone, asked.request, relay.origin, { grant: 'session' });
    relay.sendApproval(asked.request.requestId, { ...token, grant: 'half_hour' });
    await expect
      .poll(() => auditLines(machine))
      .toContainEqual(
        expect.objectContaining({ requestId: asked.request.requestId, code: 'challenge_mismatch' }),
      );
    await expire(asked);
    expect((await grantsJson()).grants).toEqual([]);
  });

  it('refuses a grant for a request that offered none (grant_not_offered), even signed', async () => {
    // Quoted words are not plain: no rule is offered for this call.
    const asked = await asking(bash('git push origin "main"'));
    const { token, details } = await phoneApproves(phone, asked.request, relay.origin, {
      grant: 'half_hour',
    });
    expect(details.similar).toBeUndefined();
    relay.sendApproval(asked.request.requestId, token);
    await expect
      .poll(() => auditLines(machine))
      .toContainEqual(
        expect.objectContaining({ requestId: asked.request.requestId, code: 'grant_not_offered' }),
      );
    await expire(asked);
    expect((await grantsJson()).grants).toEqual([]);
  });

  it('refuses a session grant for a call that has no session (grant_not_offered)', async () => {
    const asked = await asking(
      hookInput('PreToolUse', 'Bash', { command: 'git push' }, { session_id: undefined }),
    );
    const { token, details } = await phoneApproves(phone, asked.request, relay.origin, { grant: 'session' });
    expect(details.similar).not.toHaveProperty('conversation');
    relay.sendApproval(asked.request.requestId, token);
    await expect
      .poll(() => auditLines(machine))
      .toContainEqual(
        expect.objectContaining({ requestId: asked.request.requestId, code: 'grant_not_offered' }),
      );
    await expire(asked);
  });

  // The next run may hold other code under the same words: `build.sh` rewritten by the agent.
  it.each(['timeout 60 bash build.sh', 'cat build.sh | sh', 'python3 -m pytest', 'BASH_ENV=./env.sh make'])(
    'offers nothing for `%s`, which runs code its words do not hold',
    async (command) => {
      const asked = await asking(bash(command));
      const { details } = await phoneApproves(phone, asked.request, relay.origin);
      expect(details.similar).toBeUndefined();
      await expire(asked);
    },
  );

  it('offers nothing for Latch’s own files, and no grant lets a call touch them', async () => {
    await grantGitPush('half_hour');
    const asked = await asking(bash(`git push ${machine.files.policy}`));
    const { details } = await phoneApproves(phone, asked.request, relay.origin);
    expect(details.similar).toBeUndefined();
    await expire(asked);
    await runLatch(machine, ['policy', 'revoke', '--all']);
  });
});

describe('a revoke while the host clock is ahead (review rt)', () => {
  const HOUR_MS = 3_600_000;
  let own: PairedDaemon | undefined;
  afterEach(async () => {
    await own?.stop();
    own = undefined;
  });

  /** A daemon of its own, its host clock moved by `move`. */
  async function ownWithMovedClock(phones: number) {
    own = await startPairedDaemon({ phones });
    const clock = movedClock(own.machine);
    own.daemon = await restartDaemon(own.daemon, own.machine, own.relay);
    return { p: own, clock };
  }

  /** Asks for `git push origin main` in `session` and has phone `by` approve it, with a half-hour rule. */
  async function approveWithRule(p: PairedDaemon, by: number, session = 'session-1') {
    const before = p.relay.requests.length;
    const hook = startHook(p.machine, bash('git push origin main', session));
    const request = await p.relay.nextRequest(before);
    const { token } = await phoneApproves(p.phones[by]!, request, p.relay.origin, { grant: 'half_hour' });
    return { hook, send: () => p.relay.sendApproval(request.requestId, token) };
  }

  /** The same, with a half-hour grant for `git push` in force. */
  async function grantedWithMovedClock(options: { phones: number; by: number }) {
    const { p, clock } = await ownWithMovedClock(options.phones);
    const approval = await approveWithRule(p, options.by);
    approval.send();
    expect((await approval.hook).output).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    return { p, clock };
  }

  /** Once the clock is back: the grant covers nothing, `latch policy grants` lists none, the call asks. */
  async function grantCoversNothing(p: PairedDaemon) {
    const grants = JSON.parse(
      (await runLatch(p.machine, ['policy', 'grants', '--json'])).stdout,
    ) as GrantsJson;
    expect(grants.grants).toEqual([]);
    const before = p.relay.requests.length;
    const hook = startHook(p.machine, bash('git push origin feature/y', 'session-7'));
    const request = await p.relay.nextRequest(before);
    p.relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: request.requestId, at: Date.now() });
    expect((await hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(auditLines(p.machine)).not.toContainEqual(
      expect.objectContaining({ event: 'allowed', via: 'grant', command: 'git push origin feature/y' }),
    );
  }

  it('latch policy revoke --all ends the grant, which covers nothing once the clock is back', async () => {
    const { p, clock } = await grantedWithMovedClock({ phones: 1, by: 0 });
    await clock.move(HOUR_MS);
    const revoked = await runLatch(p.machine, ['policy', 'revoke', '--all', '--json']);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ revoked: [expect.any(String)] });
    await clock.move(0);
    await grantCoversNothing(p);
  });

  it('latch devices --revoke of the phone that granted it ends the grant', async () => {
    const { p, clock } = await grantedWithMovedClock({ phones: 2, by: 1 });
    await clock.move(HOUR_MS);
    expect((await runLatch(p.machine, ['devices', '--revoke', p.phones[1]!.id])).code).toBe(0);
    expect(audited(p.machine, 'grant_revoked')).toHaveLength(1);
    await clock.move(0);
    await grantCoversNothing(p);
  });

  it('a freeze ends the grant, and the resume once the clock is back brings none back', async () => {
    const { p, clock } = await grantedWithMovedClock({ phones: 1, by: 0 });
    await clock.move(HOUR_MS);
    const envelope = await signFreeze(p.machine, p.phones[0]);
    const id = await freezeId(envelope);
    sendFreeze(p.relay, envelope, 1);
    await expect.poll(() => audited(p.machine, 'freeze', id)).toHaveLength(1);
    expect(audited(p.machine, 'grant_revoked')).toContainEqual(
      expect.objectContaining({ grants: [expect.any(String)], by: 'freeze' }),
    );
    await clock.move(0);
    sendVotes(p.relay, id, [await vote(p.machine, p.relay, p.phones[0], id)]);
    await expect.poll(() => audited(p.machine, 'resume', id)).toHaveLength(1);
    await grantCoversNothing(p);
  });

  it('a grant a revoke missed still covers nothing once its phone is no longer trusted', async () => {
    const { p } = await grantedWithMovedClock({ phones: 2, by: 1 });
    const before = p.relay.requests.length;
    expect((await startHook(p.machine, bash('git push origin feature/x', 'session-7'))).output).toMatchObject(
      {
        hookSpecificOutput: { permissionDecision: 'allow' },
      },
    );
    expect(p.relay.requests.length).toBe(before);
    // As a revoke that missed it would leave it: the phone revoked, the grant not.
    withStore(p.machine, (store) => store.revokeDevice(p.phones[1]!.id, Date.now()));
    await grantCoversNothing(p);
  });

  it('a rule approved after the clock is set back covers calls, though every rule ended while it was ahead (review rv10c)', async () => {
    const { p, clock } = await grantedWithMovedClock({ phones: 1, by: 0 });
    await clock.move(HOUR_MS);
    expect((await runLatch(p.machine, ['policy', 'revoke', '--all'])).code).toBe(0);
    await clock.move(0);
    const approval = await approveWithRule(p, 0, 'session-8');
    approval.send();
    expect((await approval.hook).output).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    const listed = JSON.parse(
      (await runLatch(p.machine, ['policy', 'grants', '--json'])).stdout,
    ) as GrantsJson;
    expect(listed.grants).toHaveLength(1);
    const before = p.relay.requests.length;
    expect((await startHook(p.machine, bash('git push origin feature/z', 'session-8'))).output).toMatchObject(
      { hookSpecificOutput: { permissionDecision: 'allow' } },
    );
    expect(p.relay.requests.length).toBe(before);
  });

  it('a rule asked for while the clock was ahead, revoked with --all once it is back, never comes (review rv10c)', async () => {
    const { p, clock } = await ownWithMovedClock(1);
    await clock.move(HOUR_MS);
    const approval = await approveWithRule(p, 0, 'session-9');
    await clock.move(0);
    expect((await runLatch(p.machine, ['policy', 'revoke', '--all'])).code).toBe(0);
    approval.send();
    expect((await approval.hook).output).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    await grantCoversNothing(p);
  });

  it('a rule revoked with --all while its request waits never comes, though the clock went days ahead and back', async () => {
    const { p, clock } = await ownWithMovedClock(2);
    const approval = await approveWithRule(p, 0, 'session-10');
    expect((await runLatch(p.machine, ['policy', 'revoke', '--all'])).code).toBe(0);
    // Three days ahead, another phone's approval uses its token (this one's held token would then
    // be refused for its counter): the used ones past their day are forgot.
    await clock.move(3 * 86_400_000);
    const before = p.relay.requests.length;
    const other = startHook(p.machine, bash('git push origin other', 'session-11'));
    const request = await p.relay.nextRequest(before);
    p.relay.sendApproval(
      request.requestId,
      (await phoneApproves(p.phones[1]!, request, p.relay.origin)).token,
    );
    expect((await other).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    await clock.move(0);
    approval.send();
    expect((await approval.hook).output).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    await grantCoversNothing(p);
  });
});
