import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { beforeEach, describe, expect, it } from 'vitest';
import { initMachine, newMachine, runLatch, withStore, type LatchMachine } from '../support/latchMachine.ts';

let machine: LatchMachine;

beforeEach(async () => {
  machine = newMachine();
  await initMachine(machine, { relay: 'http://127.0.0.1:9' });
  withStore(machine, (_store, audit) => {
    for (let i = 0; i < 5; i++)
      audit.append({ event: 'allowed', via: 'policy', tool: 'Read', command: `cat file-${i}` });
  });
});

const lines = () => readFileSync(machine.files.audit, 'utf8').split('\n').filter(Boolean);
const rewrite = (next: string[]) => writeFileSync(machine.files.audit, `${next.join('\n')}\n`);
const verify = () => runLatch(machine, ['audit', 'verify']);

describe('latch audit verify', () => {
  it('passes on a clean log', async () => {
    expect(await verify()).toMatchObject({
      code: 0,
      stdout: `ok: ${lines().length} lines, the chain is intact\n`,
    });
  });

  it('fails after one line is edited', async () => {
    const edited = lines();
    const index = edited.findIndex((line) => line.includes('cat file-1'));
    edited[index] = edited[index]!.replace('cat file-1', 'cat file-X');
    rewrite(edited);
    const result = await verify();
    expect(result.code).toBe(1);
    // The line after the edited one no longer carries its hash (lines count from 1).
    expect(result.stdout).toMatch(new RegExp(`^broken at line ${index + 2}: does not carry the hash`));
  });

  it('fails after a line is deleted', async () => {
    const cut = lines();
    cut.splice(2, 1);
    rewrite(cut);
    expect((await verify()).code).toBe(1);
  });

  it('fails after two lines are swapped', async () => {
    const swapped = lines();
    [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
    rewrite(swapped);
    expect((await verify()).code).toBe(1);
  });

  it('fails after the last lines are cut', async () => {
    rewrite(lines().slice(0, -2));
    const result = await verify();
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/lines were cut or replaced/);
  });

  it('keeps ids and drops text when content is redacted', async () => {
    withStore(machine, (store) => {
      new AuditLog(machine.files.audit, store, { redactContent: true }).append({
        event: 'asked',
        requestId: 'req-1',
        title: 'Run rm -rf build',
        detail: 'rm -rf build',
        cwd: '/srv',
      });
    });
    const last = JSON.parse(lines().at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({ event: 'asked', requestId: 'req-1' });
    expect(last).not.toHaveProperty('title');
    expect(last).not.toHaveProperty('detail');
    expect(last).not.toHaveProperty('cwd');
    expect((await verify()).code).toBe(0);
  });

  it('writes the log with mode 0600', () => {
    expect(statSync(machine.files.audit).mode & 0o777).toBe(0o600);
  });
});
