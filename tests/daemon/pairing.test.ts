import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../../shared/approvals/approvalChallenge.ts';
import { openRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import type { RequestList } from '../../shared/messages/relayViews.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { parsePairingLink } from '../../shared/pairing/pairingLink.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { RelayDriver } from '../support/relayDriver.ts';
import { pairingLinkOn, startLatch } from '../support/latchRun.ts';
import { pairSoftwarePhone } from '../support/softwarePairing.ts';
import { decodeModules, readTerminalQr, screenSize } from '../support/terminalScreen.ts';
import {
  auditLines,
  hookInput,
  initMachine,
  newMachine,
  runLatch,
  startDaemon,
  startHook,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';

const state = mkdtempSync(join(tmpdir(), 'latch-pairing-relay-'));
let relayProcess: RelayProcess;
let relay: RelayDriver;
let machine: LatchMachine;
let daemon: RunningDaemon | undefined;
let phone: TestPhone;

beforeAll(async () => {
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  relayProcess = await startRelay({ persistTo: state, envFile });
  relay = new RelayDriver(relayProcess.origin, (url, init) => fetch(url, init));
  machine = newMachine();
  await initMachine(machine, { relay: relayProcess.origin });
});

afterAll(async () => {
  await daemon?.stop();
  await relayProcess.stop();
  rmSync(state, { recursive: true, force: true });
});

describe('latch pair against the real relay', () => {
  it('shows a QR code and the link, waits for the phone, shows the same short code, and stores the phone', async () => {
    const paired = await pairSoftwarePhone(machine, relay, { name: 'Ada’s phone' });
    phone = paired.phone;
    const { stdout, phoneCode } = paired;
    expect(stdout).toContain('▀'); // the QR code, drawn in half blocks
    // …which reads back, on a dark and on a light terminal, as the link printed below it.
    const link = /^(http\S+\/pair#\S+)$/m.exec(stdout)![1]!;
    expect(decodeModules(readTerminalQr(stdout, 'dark'))).toBe(link);
    expect(decodeModules(readTerminalQr(stdout, 'light'))).toBe(link);
    // What it printed while it waited, the link last, fits a terminal of 80×24.
    const waiting = stdout.slice(0, stdout.indexOf(`${link}\n`) + link.length + 1);
    expect(waiting.startsWith('Waiting for your phone')).toBe(true);
    expect(screenSize(waiting, 80).rows).toBeLessThanOrEqual(24);
    expect(screenSize(waiting, 80).columns).toBeLessThanOrEqual(80);
    expect(stdout).toContain(`Your phone shows this code: ${phoneCode}`);
    const devices = await runLatch(machine, ['devices']);
    expect(devices.stdout).toContain(`${phone.id}  Ada’s phone`);
    expect(statSync(machine.files.hostToken).mode & 0o777).toBe(0o600);
    expect(stdout).not.toMatch(/host-token|Bearer/);
  });

  it('then gates a call through the relay: the phone approves, the hook allows', async () => {
    daemon = await startDaemon(machine);
    const hook = startHook(machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }));
    const fleet = /fleet = "([^"]+)"/.exec(
      (await import('node:fs')).readFileSync(machine.files.config, 'utf8'),
    )![1]!;

    let pending: RequestList['requests'] = [];
    await expect
      .poll(async () => {
        pending = (
          await relay.phoneCall<RequestList>(phone, 'GET', `/v1/fleets/${fleet}/requests?state=pending`)
        ).body.requests;
        return pending.length;
      })
      .toBe(1);
    const [view] = pending as [RequestList['requests'][number]];
    const context = { fleet, host: view.host, requestId: view.requestId, device: phone.id };
    const details = await openRequestDetails(
      view.box!,
      { privateKey: phone.ecdhKeys.privateKey, publicKeyRaw: phone.ecdhKeyRaw },
      context,
    );
    if (!details.ok) throw details.error;
    expect(details.value).toMatchObject({
      tool: 'Bash',
      detail: 'rm -rf build',
      risk: 'high',
      hostName: 'test-box',
    });

    const binding = await detailsBinding(details.value);
    const assertion = await phone.authenticator.assert({
      rpId: relay.rpId,
      origin: relay.origin,
      challenge: await approvalChallenge(binding),
    });
    const token = {
      v: PROTOCOL_VERSION,
      fleet,
      host: view.host,
      requestId: view.requestId,
      decision: 'approve' as const,
      device: phone.id,
      assertion,
    };
    expect(
      (await relay.phoneCall(phone, 'POST', `/v1/fleets/${fleet}/requests/${view.requestId}/decision`, token))
        .status,
    ).toBe(200);

    expect((await hook).output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'latch: approved on Ada’s phone',
      },
    });
  });

  it('adds a second phone only once the first approves it, and says so on the first phone', async () => {
    const refused = await pairSoftwarePhone(machine, relay, {
      name: 'Mallory’s phone',
      admittedBy: { phone, decision: 'deny' },
    });
    expect(refused.admission).toMatchObject({
      tool: 'latch.phone',
      title: 'Add phone "Mallory’s phone" to test-box?',
    });
    expect(refused.stderr).toMatch(/^latch: not added: denied on Ada’s phone/m);
    expect((await runLatch(machine, ['devices'])).stdout).not.toContain('Mallory');

    const added = await pairSoftwarePhone(machine, relay, {
      name: 'Bob’s phone',
      admittedBy: { phone, decision: 'approve' },
    });
    expect(added.admission).toMatchObject({ tool: 'latch.phone', risk: 'high' });
    // Asked by Latch, not in an agent's session: the card names none (review hc 13).
    expect(added.admission).not.toHaveProperty('session');
    // The keys latch pair prints are the keys the approving phone is shown.
    const keys = /^Approve adding Bob’s phone \(keys ([0-9a-f]{4} [0-9a-f]{4} [0-9a-f]{4})\)/m.exec(
      added.stdout,
    )?.[1];
    expect(keys).toBeDefined();
    expect(added.admission?.detail).toMatch(new RegExp(`^keys ${keys}\n`));
    expect(added.stdout).toContain('Paired Bob’s phone.');
    // Two phones now, one needed to resume: the line that raises it, which takes effect at once.
    expect(added.stdout).toContain(
      `To require 2, set quorum = 2 under [kill_switch] in ${machine.files.config}; raising it takes effect at once.`,
    );
    expect((await runLatch(machine, ['devices'])).stdout).toContain(`${added.phone.id}  Bob’s phone`);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'paired',
        device: added.phone.id,
        approvedIn: added.admission!.requestId,
      }),
    );
  }, 90_000);

  it('takes its offer back when stopped with Ctrl-C, so that a phone on it is told at once', async () => {
    const pair = startLatch(machine, ['pair']);
    try {
      const link = parsePairingLink(await pair.waitFor(pairingLinkOn, 'a pairing link'));
      if (!link.ok) throw link.error;
      const { offerId, offerToken } = await derivePairingKeys(link.value.secret);
      const offerStatus = () =>
        relay.call('GET', `/v1/pairing/${offerId}`, { headers: { 'latch-offer-token': offerToken } });
      expect((await offerStatus()).status).toBe(200);
      pair.interrupt();
      expect(await pair.exited).toBe(130);
      expect((await offerStatus()).status).toBe(404);
    } finally {
      pair.kill();
    }
  });

  it('says why a TOTP it could not enrol was not added, in one line, once the phone is paired', async () => {
    const alone = newMachine();
    await initMachine(alone, { relay: relayProcess.origin });
    // No daemon runs to ask a paired phone about the authenticator.
    const paired = await pairSoftwarePhone(alone, relay, { args: ['--totp'], refusalExpected: true });
    expect(paired.stdout).toContain('Paired Software phone.');
    expect(paired.code).toBe(1);
    expect(paired.stderr).toMatch(/^latch: a paired phone must approve this, through the daemon: .+\n$/);
  });

  it('latch doctor reports every check passing, with the relay reachable and the quorum met', async () => {
    const doctor = await runLatch(machine, ['doctor']);
    expect(
      doctor.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => line.slice(0, 2) + line.slice(2).split(':')[0]),
    ).toEqual([
      '✓ config',
      '✓ state',
      '✓ host key',
      '✓ file modes',
      '✓ socket privacy',
      '✓ relay reachable',
      '✓ devices paired',
      '✓ quorum reachable',
      '✓ policy',
      // A warning, which fails no check.
      ...(process.geteuid?.() === 0 ? ['! running as root'] : []),
    ]);
    expect(doctor.code).toBe(0);
  });

  it('latch doctor names each failing check with a fix', async () => {
    await daemon!.stop();
    daemon = undefined;
    const doctor = await runLatch(machine, ['doctor'], { env: { LATCH_HOME: machine.home } });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(
      /✗ socket privacy: the daemon is not running[\s\S]*fix: start latch daemon/,
    );
  });
});
