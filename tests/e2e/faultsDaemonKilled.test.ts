import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connect } from '../../daemon/sdk/latch.ts';
import { startFaultRig } from '../support/faultRig.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { hookInput, startHook } from '../support/latchMachine.ts';
import { decideAtRelay, openAtRelay, tokenFor } from '../support/phoneAtRelay.ts';

/**
 * The daemon killed with SIGKILL while calls wait for a phone, with real processes: every door
 * gets an explicit deny at once, and after the restart the phone's approval of an old request,
 * a valid token signed for it and delivered by the relay after the restart, allows nothing.
 */

const POLICY = `
default = "ask"
[[rule]]
name = "shell"
tool = "Bash"
action = "ask"
risk = "low"
[[rule]]
name = "commands"
tool = "exec"
action = "ask"
risk = "low"
`;

describe('the daemon killed with SIGKILL mid-approval', () => {
  it('denies every waiting caller; restarted, it settles their requests as withdrawn and refuses the phone’s later approval (code withdrawn)', async () => {
    const rig = await startFaultRig({ name: 'daemon-killed', policy: POLICY });
    onTestFinished(() => rig.stop());
    const { machine, proxy, driver, phone, fleet } = rig;
    const witness = join(machine.home, 'the-command-ran');
    const hook = startHook(machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }));
    const exec = spawn(process.execPath, [LATCH_BIN, 'exec', '--', 'touch', witness], {
      env: machine.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    onTestFinished(() => void exec.kill('SIGKILL'));
    let execStderr = '';
    exec.stderr.on('data', (chunk: Buffer) => (execStderr += chunk.toString()));
    const execExit = new Promise<number | null>((resolve) => exec.once('exit', resolve));
    let deployed = 0;
    const sdk = connect({ socketPath: machine.socket }).then((latch) =>
      latch.guard({ tool: 'deploy', risk: 'low' }, () => deployed++),
    );
    // Three requests at the relay: every door now waits for the phone.
    await expect.poll(rig.pendingAtRelay).toHaveLength(3);
    const asked = await Promise.all(
      (await rig.pendingAtRelay()).map((id) => openAtRelay(driver, phone, fleet, id)),
    );
    const bashAsk = asked.find(({ details }) => details.tool === 'Bash')!.details;

    rig.daemon.child.kill('SIGKILL');
    const hookAnswer = await hook;
    // Claude Code blocks on exit 2 as it does on a deny in JSON: either is a deny, nothing else is.
    if (hookAnswer.code === 2) expect(hookAnswer.stderr).toMatch(/^latch: daemon_unreachable: /m);
    else
      expect(hookAnswer.output?.['hookSpecificOutput']).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^latch: daemon_unreachable: /),
      });
    expect(await execExit).toBe(77);
    expect(execStderr).toMatch(/^latch: not running touch .*daemon_unreachable/m);
    expect(await sdk).toMatchObject({ ok: false, reason: 'unavailable', code: 'daemon_unreachable' });

    // Restarted where the relay cannot be told yet: the phone can still approve at the relay.
    proxy.cut();
    await rig.startDaemonAgain();
    for (const { details } of asked) {
      expect(rig.recordOf(details.requestId)).toBe('withdrawn');
      expect(rig.audited('withdrawn', details.requestId)).toEqual([
        expect.objectContaining({ why: 'daemon_restarted' }),
      ]);
    }
    const late = await decideAtRelay(driver, phone, await tokenFor(driver, phone, bashAsk));
    expect(late.status).toBe(200);

    proxy.heal();
    // The relay delivers the valid token after the restart: refused, audited, nothing runs.
    await expect.poll(() => rig.audited('token_refused', bashAsk.requestId)).toHaveLength(1);
    expect(rig.audited('token_refused', bashAsk.requestId)[0]).toMatchObject({ code: 'withdrawn' });
    expect(rig.audited('approved')).toEqual([]);
    expect(rig.recordOf(bashAsk.requestId)).toBe('withdrawn');
    // The relay hears of the other two once reachable: the phone no longer lists them.
    await expect.poll(rig.pendingAtRelay).toEqual([]);
    expect(existsSync(witness)).toBe(false);
    expect(deployed).toBe(0);
  });
});
