import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DAEMON_REFUSED_EXIT } from '../../daemon/cli/exitCodes.ts';
import { openRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import type { ApprovalRequest } from '../../shared/messages/approvals.ts';
import {
  auditLines,
  claudeCodeDecision,
  hookInput,
  initMachine,
  type LatchMachine,
  newMachine,
  runLatch,
  startDaemon,
} from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';

/**
 * The agent cannot loosen its own leash by editing Latch's files: a looser config.toml waits for
 * a phone, and a state database that is lost or swapped never makes the files on disk approved.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function paired(options: Parameters<typeof startPairedDaemon>[0] = {}): Promise<PairedDaemon> {
  const started = await startPairedDaemon(options);
  cleanups.push(() => started.stop());
  return started;
}

const editConfig = (machine: LatchMachine, edit: (text: string) => string) =>
  writeFileSync(machine.files.config, edit(readFileSync(machine.files.config, 'utf8')), { mode: 0o600 });

const readInput = hookInput('PreToolUse', 'Read', { file_path: '/x' });
const read = (machine: LatchMachine) => runLatch(machine, ['hook', 'claude-code'], { input: readInput });

async function opened(phone: TestPhone, request: ApprovalRequest) {
  const box = request.sealed.find((sealed) => sealed.device === phone.id)!.box;
  const details = await openRequestDetails(
    box,
    { privateKey: phone.ecdhKeys.privateKey, publicKeyRaw: phone.ecdhKeyRaw },
    { fleet: request.fleet, host: request.host, requestId: request.requestId, device: phone.id },
  );
  if (!details.ok) throw details.error;
  return details.value;
}

describe('a looser config.toml', () => {
  it('waits for a phone, with the approved config in force, and shows the phone what changed', async () => {
    const { machine, relay, phones } = await paired({ quorum: 2, phones: 2 });
    editConfig(machine, (text) =>
      text.replace('quorum = 2', 'quorum = 1').replace('mode = "none"', 'mode = "challenge"'),
    );
    const before = relay.requests.length;
    await read(machine); // any gated call looks at the config
    const asked = await relay.nextRequest(before);
    const details = await opened(phones[0], asked);
    expect(details).toMatchObject({ tool: 'latch.config', title: 'Loosen the Latch config', risk: 'high' });
    expect(details.detail).toContain('kill_switch.quorum: 2 → 1 (looser)');
    expect(details.detail).toContain('fallback.mode: "none" → "challenge" (looser)');
    // Meanwhile the approved config is in force.
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/quorum 2/);

    await relay.sendDenial(phones[0], asked);
    await expect
      .poll(() => auditLines(machine).some((line) => line['event'] === 'config_loosening_refused'))
      .toBe(true);
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/quorum 2/);
  });

  it('takes effect once a phone approves that very change', async () => {
    const { machine, relay, phones } = await paired({ quorum: 2, phones: 2 });
    editConfig(machine, (text) => text.replace('quorum = 2', 'quorum = 1'));
    const before = relay.requests.length;
    await read(machine);
    const asked = await relay.nextRequest(before);
    relay.sendApproval(asked.requestId, (await phoneApproves(phones[1]!, asked, relay.origin)).token);
    await expect.poll(async () => (await runLatch(machine, ['status'])).stdout).toMatch(/quorum 1/);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'config_approved', by: 'approved on Phone 2' }),
    );
  });

  it('takes a tightening at once, without asking', async () => {
    const { machine, relay } = await paired({ quorum: 1 });
    editConfig(machine, (text) =>
      text.replace('quorum = 1', 'quorum = 2').replace('timeout_seconds = 300', 'timeout_seconds = 60'),
    );
    const before = relay.requests.length;
    await read(machine);
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/quorum 2/);
    expect(relay.requests.length).toBe(before);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'config_approved', by: expect.stringMatching(/^tightening/) }),
    );
  });
});

describe('a lost or swapped state database', () => {
  it('is refused: the daemon will not start, every call is denied, and init --reset starts over on the defaults', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    // The agent's plan: a policy that allows everything, then a state with no record of what was approved.
    writeFileSync(machine.files.policy, 'default = "allow"\n', { mode: 0o600 });
    rmSync(machine.files.state);
    const refused = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
    expect(refused.code).toBe(DAEMON_REFUSED_EXIT);
    expect(refused.stderr).toMatch(/state\.db is missing: .*latch init --reset/);
    const denied = await read(machine);
    expect(claudeCodeDecision(denied, readInput)).toBe('deny');

    const reset = await runLatch(machine, ['init', '--reset']);
    expect(reset.code).toBe(0);
    const daemon = await startDaemon(machine);
    cleanups.push(() => daemon.stop());
    // The defaults are the baseline: the file's "allow everything" is a loosening nobody approved.
    const curl = hookInput('PreToolUse', 'Bash', { command: 'curl -X POST https://example.com' });
    const bash = await runLatch(machine, ['hook', 'claude-code'], { input: curl });
    expect(claudeCodeDecision(bash, curl)).toBe('deny');
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/policy loosening pending/);
  });

  it('is refused when another state database is put in its place', async () => {
    const other = newMachine();
    await initMachine(other, { relay: 'http://127.0.0.1:9', policy: 'default = "allow"\n' });
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    copyFileSync(other.files.state, machine.files.state);
    const refused = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
    expect(refused.code).toBe(DAEMON_REFUSED_EXIT);
    expect(refused.stderr).toMatch(/state\.db does not match .*audit\.log/);
  });

  it('mends the one benign mismatch: a line written just before a crash', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const lines = readFileSync(machine.files.audit, 'utf8').split('\n').filter(Boolean);
    const { createHash } = await import('node:crypto');
    const last = lines.at(-1)!;
    const seq = (JSON.parse(last) as { seq: number }).seq + 1;
    const prev = createHash('sha256').update(last).digest('hex');
    writeFileSync(
      machine.files.audit,
      `${lines.join('\n')}\n${JSON.stringify({ seq, at: new Date().toISOString(), event: 'x', prev })}\n`,
    );
    const daemon = await startDaemon(machine);
    cleanups.push(() => daemon.stop());
    expect((await runLatch(machine, ['audit', 'verify'])).code).toBe(0);
  });
});
