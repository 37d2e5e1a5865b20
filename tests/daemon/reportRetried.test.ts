import { mkdirSync, renameSync, rmdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { statusCode } from '../support/killSwitchRelay.ts';
import { auditLines, hookInput, runLatch, startHook, type LatchMachine } from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import type { StandInRelay } from '../support/standInRelay.ts';

/**
 * "I didn't expect this" only tightens, and must not be lost: a report whose handling fails once
 * (the audit cannot be written for a moment, as on a full disk) is tried again by the event log,
 * and then acts, rather than being taken for one already acted on.
 */
let paired: PairedDaemon;
let relay: StandInRelay;
let machine: LatchMachine;
let phone: TestPhone;

/** A daemon of its own for each case: the first leaves its fleet frozen. */
function withPairedDaemon(): void {
  beforeAll(async () => {
    paired = await startPairedDaemon();
    ({ relay, machine } = paired);
    [phone] = paired.phones;
  });
  afterAll(() => paired.stop());
}

/** Runs `during` while the audit log cannot be written (a folder in its place: root ignores modes). */
async function withAuditUnwritable(during: () => Promise<void>): Promise<void> {
  const audit = machine.files.audit;
  renameSync(audit, `${audit}.kept`);
  mkdirSync(audit);
  try {
    await during();
    // Long enough for the daemon to meet the fault, and the event log to wait to try again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
  } finally {
    rmdirSync(audit);
    renameSync(`${audit}.kept`, audit);
  }
  await framesHandled(machine, relay);
}

const bash = (command: string) =>
  startHook(machine, hookInput('PreToolUse', 'Bash', { command }, { session_id: 'reported-session' }));

describe('a report whose handling fails once', () => {
  withPairedDaemon();

  it('freezes the fleet once it is tried again', async () => {
    const asking = runLatch(machine, ['request', '--title', 'deploy', '--timeout', '60']);
    const request = await relay.nextRequest(0);
    relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: request.requestId, at: Date.now() });
    await asking;
    await withAuditUnwritable(() => relay.sendDenial(phone, request, 'fleet'));
    await expect.poll(() => statusCode(machine)).toBe(1);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'reported', requestId: request.requestId, acted: true }),
    );
  });
});

describe('a session report whose handling fails once', () => {
  withPairedDaemon();

  it('refuses the session’s other request, even approved on a phone', async () => {
    const before = relay.requests.length;
    const first = bash('git push origin main');
    const reported = await relay.nextRequest(before);
    relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: reported.requestId, at: Date.now() });
    await first;
    const second = bash('git push origin release');
    const other = await relay.nextRequest(before + 1);
    await withAuditUnwritable(() => relay.sendDenial(phone, reported, 'session'));
    relay.sendApproval(other.requestId, (await phoneApproves(phone, other, relay.origin)).token);
    expect((await second).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
  });
});
