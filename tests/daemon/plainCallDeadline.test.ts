import { describe, expect, it, onTestFinished } from 'vitest';
import { BrokenDaemon } from '../support/brokenDaemon.ts';
import { auditLines, initMachine, newMachine, runLatch } from '../support/latchMachine.ts';

// Found by review ka: `latch status` and `latch panic` waited for ever on an answer whose body
// came a byte at a time: their wait was an idle timeout, which every byte started again, so
// `latch panic` never went on to freeze this host from the terminal.
describe('a plain call to the daemon has one deadline, head and body', () => {
  async function tricklingDaemon() {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const broken = await BrokenDaemon.listen(machine.socket);
    onTestFinished(() => broken.stop());
    broken.behaviour = 'http-trickle';
    return machine;
  }

  it('latch status says unreachable within its 5 s', async () => {
    const machine = await tricklingDaemon();
    const started = Date.now();
    const status = await runLatch(machine, ['status'], { timeoutMs: 30_000 });
    const took = Date.now() - started;
    expect(status).toMatchObject({ code: 2, stdout: 'unreachable: no answer within 5 s\n' });
    expect(took).toBeLessThan(12_000);
  });

  it('latch panic gives up on the daemon at its 15 s and freezes this host from the terminal', async () => {
    const machine = await tricklingDaemon();
    const started = Date.now();
    const panic = await runLatch(machine, ['panic', 'stuck daemon'], { timeoutMs: 45_000 });
    const took = Date.now() - started;
    // 1: frozen here, the fleet not told (the relay is unreachable).
    expect(panic.code).toBe(1);
    expect(panic.stdout).toMatch(/^frozen: this host is frozen, but the fleet was not told/);
    expect(took).toBeLessThan(25_000);
    expect(auditLines(machine).filter(({ event }) => event === 'freeze')).toHaveLength(1);
  });
});
