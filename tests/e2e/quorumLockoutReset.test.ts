import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { UNVERIFIED_FREEZE_REASON } from '../../daemon/kill-switch/killSwitch.ts';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { DevicesJson } from '../../daemon/cli/commands/devices.ts';
import type { DoctorJson } from '../../daemon/cli/commands/doctor.ts';
import type { StatusJson } from '../../daemon/cli/commands/status.ts';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay } from '../../scripts/lib/relayProcess.ts';
import { completePairing, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import type { RequestList } from '../../shared/messages/relayViews.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { parsePairingLink } from '../../shared/pairing/pairingLink.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { json } from '../support/cliOutput.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { pairingLinkOn, startLatch } from '../support/latchRun.ts';
import {
  auditLines,
  hookInput,
  newMachine,
  runLatch,
  startDaemonForTest,
  startHook,
  type LatchMachine,
} from '../support/latchMachine.ts';
import { RelayDriver } from '../support/relayDriver.ts';
import { pairSoftwarePhone } from '../support/softwarePairing.ts';

/**
 * The way out of a frozen-quorum lockout, as docs/kill-switch.md#resume tells it, walked with
 * every part real: the relay (`wrangler dev`), `latch daemon`, and the commands a person types
 * (`latch init`, `latch pair`, `latch status`, `latch doctor`, `latch init --reset`), with a
 * software phone that pairs through `latch pair`'s code and freezes and votes at the relay as the
 * app does. A host with one phone and `kill_switch.quorum = 2` is frozen; the phone's vote does
 * not lift it; lowering the quorum in config.toml is a loosening the frozen host never puts in
 * force; stopping the daemon, `latch init --reset`, starting it and pairing the phone again is,
 * once the phone freezes again and votes on that freeze.
 *
 * The phone that pairs again is the same phone (same device key, same passkey), as the app does:
 * it keeps its identity and passkey and sends them again (pwa/src/pairing.ts). Its vote on the
 * freeze still in force was counted at the relay before the reset, so "pair again, and vote"
 * alone does not lift the host: the relay refuses a second vote of that phone (`already_used`)
 * and resumes only on a new vote. Holding PANIC again makes a freeze it can vote on. Revoking is
 * not used.
 */

const READ = hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' });

/** Claude Code's answer to one PreToolUse call, through `latch hook claude-code`. */
async function hookAnswer(machine: LatchMachine, input: string) {
  const { output, code, stderr } = await startHook(machine, input);
  if (!output) throw new Error(`the hook answered nothing (exit ${code}): ${stderr}`);
  const { permissionDecision, permissionDecisionReason } = output['hookSpecificOutput'] as Record<
    string,
    string
  >;
  return { code, decision: permissionDecision, reason: permissionDecisionReason };
}

async function status(machine: LatchMachine): Promise<{ code: number | null; json: StatusJson }> {
  const ran = await runLatch(machine, ['status', '--json']);
  return { code: ran.code, json: json<StatusJson>(ran) };
}

/** `latch status` as a person reads it: its exit code and its one line. */
const statusLine = (machine: LatchMachine) => runLatch(machine, ['status']);

async function quorumCheck(machine: LatchMachine) {
  const ran = await runLatch(machine, ['doctor', '--json']);
  return json<DoctorJson>(ran).checks.find((check) => check.name === 'quorum reachable');
}

/**
 * `latch pair`, with a phone that was paired before scanning its code: the app keeps its device
 * key and passkey and sends them again. (pairSoftwarePhone makes a new phone each time.) The
 * `latch pair` process is ended when the test ends, should it still run.
 */
async function pairAgain(machine: LatchMachine, driver: RelayDriver, phone: TestPhone) {
  const pair = startLatch(machine, ['pair']);
  onTestFinished(() => pair.kill());
  const link = parsePairingLink(await pair.waitFor(pairingLinkOn, 'a pairing link'));
  if (!link.ok) throw link.error;
  const { offerId, offerToken } = await derivePairingKeys(link.value.secret);
  const scanned = await driver.scanOffer(link.value.secret);
  if (!scanned.offer?.ok)
    throw new Error(`the phone refused the offer: ${JSON.stringify(scanned.reply.body)}`);
  const offer = scanned.offer.value;
  const completion = await completePairing(phone, offer, link.value.secret, {
    origin: driver.origin,
    rpId: driver.rpId,
  });
  const sent = await driver.sendCompletion(phone, offer.fleet, offerId, offerToken, completion);
  expect(sent.status).toBe(202);
  return { code: await pair.exited, stdout: pair.stdout(), stderr: pair.stderr() };
}

describe('a host locked out by its quorum (one phone, kill_switch.quorum = 2)', () => {
  it('stays frozen on the phone’s vote and on a lowered quorum; stop, latch init --reset, start, pair again, freeze and vote: it resumes', async () => {
    // The relay, its storage, and the host's folders: all gone when the test ends, pass or fail.
    const relayState = mkdtempSync(join(tmpdir(), 'latch-quorum-lockout-relay-'));
    onTestFinished(() => rmSync(relayState, { recursive: true, force: true }));
    const envFile = join(relayState, 'relay.env');
    ensureRelayEnvFile(envFile);
    const relay = await startRelay({ persistTo: relayState, envFile });
    onTestFinished(() => relay.stop());
    const driver = new RelayDriver(relay.origin, (url, init) => fetch(url, init));
    const machine = newMachine();
    onTestFinished(() => rmSync(dirname(machine.home), { recursive: true, force: true }));

    // --- Set-up: latch init --quorum 2, one phone paired, the daemon running. ---
    // The config and policy stay as latch init writes them: after the reset, the only difference
    // from Latch's defaults is the quorum this test edits.
    const init = await runLatch(machine, [
      'init',
      '--relay',
      relay.origin,
      '--name',
      'test-box',
      '--quorum',
      '2',
    ]);
    expect(init.code).toBe(0);
    expect(readFileSync(machine.files.config, 'utf8')).toMatch(/^quorum = 2$/m);
    const paired = await pairSoftwarePhone(machine, driver, { name: 'Only phone' });
    const { phone, fleet } = paired;
    expect(paired.stdout).toContain(
      'Note: resuming after a freeze takes 2 phones and 1 is paired. Pair another phone, or set kill_switch.quorum in the config.',
    );
    let daemon = await startDaemonForTest(machine);
    await expect
      .poll(async () => (await status(machine)).json)
      .toMatchObject({
        state: 'armed',
        relay: 'connected',
        devices: 1,
        quorum: 2,
        config: 'ok',
      });
    expect(await quorumCheck(machine)).toEqual({
      name: 'quorum reachable',
      ok: false,
      detail: 'resuming takes 2, 1 paired',
      fix: 'pair more phones, or lower kill_switch.quorum (while frozen, that is not enough: see docs/kill-switch.md, Resume)',
    });
    expect(await hookAnswer(machine, READ)).toEqual({
      code: 0,
      decision: 'allow',
      reason: 'latch: allowed by policy rule "read-only tools"',
    });

    // What the app does: hold PANIC (a freeze signed with the device key), vote (Face ID), read the switch.
    const freezeFromPhone = async (reason: string) => {
      const envelope: FreezeEnvelope = await signEnvelope(
        'freeze',
        { fleet, reason },
        { role: 'device', id: phone.id },
        phone.deviceKeys.privateKey,
      );
      const reply = await driver.call<FleetState>('POST', `/v1/fleets/${fleet}/freeze`, { json: envelope });
      return { id: await freezeId(envelope), reply };
    };
    const voteFromPhone = async (freeze: string) => {
      const assertion = await phone.authenticator.assert({
        rpId: driver.rpId,
        origin: driver.origin,
        challenge: await resumeChallenge({ fleet, freeze }),
      });
      const ballot: ResumeVote = { v: PROTOCOL_VERSION, fleet, freeze, device: phone.id, assertion };
      return driver.call<FleetState>('POST', `/v1/fleets/${fleet}/resume`, { json: ballot });
    };
    const switchAtRelay = async () =>
      (await driver.phoneCall<FleetState>(phone, 'GET', `/v1/fleets/${fleet}/state`)).body;
    const audited = (event: string) => auditLines(machine).filter((line) => line['event'] === event);

    // --- 1. Frozen; the one phone's vote does not lift it. ---
    const first = await freezeFromPhone('prod incident 412');
    expect(first.reply.status).toBe(200);
    expect(first.reply.body).toMatchObject({ frozen: true, epoch: 1, votes: [], needed: 2 });
    await expect.poll(async () => (await status(machine)).code).toBe(1);
    expect(await statusLine(machine)).toEqual({
      code: 1,
      stdout: 'frozen: prod incident 412 (epoch 1; relay connected, 1 phone, quorum 2)\n',
      stderr: '',
    });
    expect(audited('freeze')).toEqual([
      expect.objectContaining({ cause: 'relay', epoch: 1, freeze: first.id, verified: true }),
    ]);

    const lonelyVote = await voteFromPhone(first.id);
    // Counted at the relay, one of the two it needs: no resume is sent to any host.
    expect(lonelyVote.status).toBe(200);
    expect(lonelyVote.body).toMatchObject({ frozen: true, votes: [phone.id], needed: 2 });
    expect(await switchAtRelay()).toMatchObject({ frozen: true, epoch: 1, votes: [phone.id], needed: 2 });
    expect(await statusLine(machine)).toEqual({
      code: 1,
      stdout: 'frozen: prod incident 412 (epoch 1; relay connected, 1 phone, quorum 2)\n',
      stderr: '',
    });
    expect(await hookAnswer(machine, READ)).toEqual({
      code: 2,
      decision: 'deny',
      reason: 'latch: kill_switch: the fleet is frozen (prod incident 412)',
    });
    expect(audited('resume')).toEqual([]);

    // --- 2. Lowering the quorum in config.toml: a loosening, which the frozen host leaves waiting. ---
    const lowered = readFileSync(machine.files.config, 'utf8').replace(/^quorum = 2$/m, 'quorum = 1');
    writeFileSync(machine.files.config, lowered);
    // The approved quorum stays in force; the edit is seen, and waits.
    await expect
      .poll(async () => (await status(machine)).json)
      .toMatchObject({
        state: 'frozen',
        quorum: 2,
        config: 'loosening_pending',
      });
    expect((await status(machine)).code).toBe(1);
    // A gated call is refused by the freeze before the config is read: the loosening is never
    // put to a phone (nothing pending at the relay, nothing asked in the audit log), so no phone
    // can approve it while the host is frozen.
    expect(await hookAnswer(machine, READ)).toEqual({
      code: 2,
      decision: 'deny',
      reason: 'latch: kill_switch: the fleet is frozen (prod incident 412)',
    });
    const pending = await driver.phoneCall<RequestList>(
      phone,
      'GET',
      `/v1/fleets/${fleet}/requests?state=pending`,
    );
    expect(pending.status).toBe(200);
    expect(pending.body.requests).toEqual([]);
    expect(audited('asked')).toEqual([]);
    expect(audited('config_approved')).toEqual([expect.objectContaining({ by: 'latch init' })]);
    expect(audited('refused').map((line) => line['blockReason'])).toEqual(['kill_switch', 'kill_switch']);
    // The relay still waits for two votes, and the phone has cast its one.
    expect(await switchAtRelay()).toMatchObject({ frozen: true, votes: [phone.id], needed: 2 });
    expectRefusedReply(await voteFromPhone(first.id), 409, 'already_used');
    expect(await quorumCheck(machine)).toMatchObject({ ok: false, detail: 'resuming takes 2, 1 paired' });
    expect((await status(machine)).json).toMatchObject({ state: 'frozen', quorum: 2 });

    // --- 3. The way out at the terminal: stop the daemon, latch init --reset, start it. ---
    await daemon.stop();
    expect(await statusLine(machine)).toMatchObject({
      code: 2,
      stdout: expect.stringMatching(/^unreachable: /),
    });
    const reset = await runLatch(machine, ['init', '--reset']);
    expect({ code: reset.code, stderr: reset.stderr }).toEqual({ code: 0, stderr: '' });
    expect(reset.stdout).toMatch(
      /^Latch starts over in .+: the old state and audit log are kept as \*\.replaced-[\w-]+\.\nPair your phones again \(latch pair\)\. Where policy\.toml or config\.toml are looser than the defaults, a phone must approve them first\.\n$/,
    );
    const aside = readdirSync(machine.home).filter((name) => /^(state\.db|audit\.log)\.replaced-/.test(name));
    expect(aside.map((name) => name.replace(/\.replaced-.*/, '')).sort()).toEqual(['audit.log', 'state.db']);
    // The phone is forgotten; config.toml (quorum 1 now) is the defaults, approved as they are.
    expect(json<DevicesJson>(await runLatch(machine, ['devices', '--json'])).devices).toEqual([]);
    expect(await quorumCheck(machine)).toMatchObject({ ok: false, detail: 'resuming takes 1, 0 paired' });

    daemon = await startDaemonForTest(machine);
    // The relay still holds the freeze: the new state takes it from the relay's state, unverified
    // (no phone is paired to check its signature), and the reconnect tells the relay quorum 1.
    // Its words, unverified, are the audit's alone.
    await expect
      .poll(async () => (await status(machine)).json)
      .toMatchObject({
        state: 'frozen',
        reason: UNVERIFIED_FREEZE_REASON,
        epoch: 1,
        relay: 'connected',
        devices: 0,
        quorum: 1,
        config: 'ok',
      });
    expect((await status(machine)).code).toBe(1);
    expect(audited('freeze')).toEqual([
      expect.objectContaining({
        cause: 'relay',
        epoch: 1,
        freeze: first.id,
        verified: false,
        via: 'relay state',
      }),
    ]);
    await expect.poll(switchAtRelay).toMatchObject({ frozen: true, votes: [phone.id], needed: 1 });

    // --- 4. Pair the phone again: the first phone of a new state needs no other's approval. ---
    const again = await pairAgain(machine, driver, phone);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toContain('Paired Only phone.');
    expect(again.stdout).not.toContain('Note: resuming');
    expect(json<DevicesJson>(await runLatch(machine, ['devices', '--json'])).devices).toEqual([
      expect.objectContaining({ id: phone.id, name: 'Only phone', revoked: false }),
    ]);
    expect(await quorumCheck(machine)).toMatchObject({ ok: true, detail: 'resuming takes 1, 1 paired' });

    // Its vote on the freeze in force was cast before the reset: the relay counts a phone once per
    // freeze, so voting again is refused, and nothing reaches the host. The relay now shows one
    // vote of the one it needs, still frozen: it resumes only when a vote arrives (the app shows
    // "Votes to resume: 1 of 1" and "This phone has voted", with no button to vote).
    expectRefusedReply(await voteFromPhone(first.id), 409, 'already_used');
    expect(await switchAtRelay()).toMatchObject({ frozen: true, votes: [phone.id], needed: 1 });
    expect((await status(machine)).json).toMatchObject({ state: 'frozen', devices: 1, quorum: 1 });

    // --- 5. So: hold PANIC again, and vote on that freeze. ---
    const second = await freezeFromPhone('freeze again to vote');
    expect(second.reply.status).toBe(200);
    expect(second.reply.body).toMatchObject({ frozen: true, epoch: 2, votes: [], needed: 1 });
    await expect.poll(() => audited('freeze').map((line) => line['freeze'])).toEqual([first.id, second.id]);
    expect(audited('freeze')[1]).toMatchObject({ cause: 'relay', epoch: 2, verified: true });
    expect(await statusLine(machine)).toEqual({
      code: 1,
      stdout: 'frozen: freeze again to vote (epoch 2; relay connected, 1 phone, quorum 1)\n',
      stderr: '',
    });

    const deciding = await voteFromPhone(second.id);
    expect(deciding.status).toBe(200);
    expect(deciding.body).toMatchObject({ frozen: false, epoch: 2, votes: [] });
    await expect.poll(async () => (await status(machine)).code).toBe(0);
    expect(await statusLine(machine)).toEqual({
      code: 0,
      stdout: 'running: armed (relay connected, 1 phone, quorum 1, 0 waiting)\n',
      stderr: '',
    });
    expect(audited('resume')).toEqual([
      expect.objectContaining({ epoch: 2, freeze: second.id, votes: [phone.id], needed: 1 }),
    ]);
    expect(audited('resume')[0]).not.toHaveProperty('refused');
    expect(await hookAnswer(machine, READ)).toEqual({
      code: 0,
      decision: 'allow',
      reason: 'latch: allowed by policy rule "read-only tools"',
    });
    expect(await switchAtRelay()).toMatchObject({ frozen: false, epoch: 2 });
  }, 240_000);
});
