import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { claudeCodeDecision, hookInput, runLatch, startHook } from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

// Through the real hook, socket and daemon, under the policy latch init writes.
describe('the policy judges the whole command an agent sends', () => {
  let paired: PairedDaemon;

  beforeAll(async () => {
    paired = await startPairedDaemon();
  });

  afterAll(() => paired.stop());

  const decisionOf = async (command: string) => {
    const input = hookInput('PreToolUse', 'Bash', { command });
    return claudeCodeDecision(await runLatch(paired.machine, ['hook', 'claude-code'], { input }), input);
  };

  /** Runs the hook, returns what the phone is shown, then lets the request expire. */
  const askedFor = async (command: string) => {
    const { relay, machine, phones } = paired;
    const before = relay.requests.length;
    const hook = startHook(machine, hookInput('PreToolUse', 'Bash', { command }));
    const request = await relay.nextRequest(before);
    const { details } = await phoneApproves(phones[0], request, relay.origin);
    relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: request.requestId, at: Date.now() });
    expect((await hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    return details;
  };

  it('allows a read-only command on its own', async () => {
    expect(await decisionOf('ls -la')).toBe('allow');
  });

  it('asks, at high risk, for a read-only command with rm -rf on the next line', async () => {
    expect(await askedFor('ls -la\nrm -rf /srv/important')).toMatchObject({
      risk: 'high',
      detail: 'ls -la\nrm -rf /srv/important',
    });
  });

  it('asks, at critical risk, for a command longer than a phone shows, past the old 8000-byte cut', async () => {
    const details = await askedFor(`ls -la ${'x'.repeat(9000)}\nrm -rf /srv/important`);
    expect(details).toMatchObject({ risk: 'critical', shortened: true });
    // The phone sees the start and the end, where the second command hides, and what is left out.
    expect(details.detail).toMatch(/^ls -la x+\n… [\d,]+ bytes not shown …\n/);
    expect(details.detail.endsWith('x\nrm -rf /srv/important')).toBe(true);
  });
});
