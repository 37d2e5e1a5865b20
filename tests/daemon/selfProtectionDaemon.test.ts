import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { connect } from '../../daemon/sdk/latch.ts';
import { openRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import { auditLines, hookInput, startHook } from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * Latch guards its own secrets, files, hook settings and daemon on a real daemon, under the
 * policy `latch init` writes and under one that allows everything: no policy loosens it.
 */
describe.each([
  ['the default policy', undefined],
  ['a policy that allows everything', 'default = "allow"\n'],
])('self-protection under %s', (_name, policy) => {
  let paired: PairedDaemon;
  /** The user's home folder on the test machine, where Claude Code keeps its settings. */
  let userHome: string;

  beforeAll(async () => {
    paired = await startPairedDaemon(policy ? { policy } : {});
    userHome = paired.machine.env['HOME']!;
  });

  afterAll(() => paired.stop());

  const hook = (tool: string, input: Record<string, unknown>, env?: NodeJS.ProcessEnv) =>
    startHook(paired.machine, hookInput('PreToolUse', tool, input), 60_000, env);

  const refusedWith = (rule: string) => ({
    code: 2,
    output: {
      hookSpecificOutput: {
        permissionDecision: 'deny',
        permissionDecisionReason: `latch: policy_violation: denied by Latch's own rule "${rule}"`,
      },
    },
  });

  /** Starts the call, checks the phone is asked at critical risk, and has the phone deny it. */
  async function askedAtCriticalRisk(tool: string, input: Record<string, unknown>, env?: NodeJS.ProcessEnv) {
    const { relay, phones } = paired;
    const before = relay.requests.length;
    const answered = hook(tool, input, env);
    const request = await relay.nextRequest(before);
    expect(request.risk).toBe('critical');
    await relay.sendDenial(phones[0], request);
    expect(await answered).toMatchObject({
      code: 2,
      output: {
        hookSpecificOutput: {
          permissionDecision: 'deny',
          permissionDecisionReason: 'latch: denied on Test phone',
        },
      },
    });
  }

  it('refuses a Read of the TOTP secret, and the audit line names the rule', async () => {
    expect(await hook('Read', { file_path: paired.machine.files.totp })).toMatchObject(
      refusedWith('latch: its secrets'),
    );
    expect(auditLines(paired.machine)).toContainEqual(
      expect.objectContaining({
        event: 'refused',
        blockReason: 'policy_violation',
        rule: 'latch: its secrets',
      }),
    );
  });

  it('refuses a Read through a link to the secret', async () => {
    const project = join(userHome, 'project');
    mkdirSync(project, { recursive: true });
    const link = join(project, 'notes.json');
    symlinkSync(paired.machine.files.totp, link);
    expect(await hook('Read', { file_path: link })).toMatchObject(refusedWith('latch: its secrets'));
  });

  it('judges a path and an input whole: longer than a phone shows, they are not cut before the guards read them', async () => {
    // 1,200 bytes of `./` before the secret's path: the file Read opens.
    const longPath = `/${'./'.repeat(600)}${paired.machine.files.totp.slice(1)}`;
    expect(await hook('Read', { file_path: longPath })).toMatchObject(refusedWith('latch: its secrets'));
    const padded = { a: 'x'.repeat(10_000), path: paired.machine.files.totp, b: 'y'.repeat(10_000) };
    expect(await hook('mcp__fs__read_file', padded)).toMatchObject(refusedWith('latch: its secrets'));
  });

  it('refuses a path no tool could open (over PATH_MAX) as an invalid request, not a cut one', async () => {
    const answer = await hook('Read', { file_path: `/${'a/'.repeat(2100)}x` });
    expect(answer).toMatchObject({
      code: 2,
      output: {
        hookSpecificOutput: {
          permissionDecision: 'deny',
          permissionDecisionReason: expect.stringContaining('a path is at most 4096 bytes'),
        },
      },
    });
  });

  it('refuses an MCP tool that reads the secret, through the hook and through the MCP gate’s request', async () => {
    expect(await hook('mcp__fs__read_file', { path: paired.machine.files.totp })).toMatchObject(
      refusedWith('latch: its secrets'),
    );
    // What `latch mcp` sends: the tool's name and its input as JSON, no paths.
    const latch = await connect({ socketPath: paired.machine.socket, agent: 'mcp' });
    let ran = false;
    expect(
      await latch.guard({ tool: 'mcp__fs__read_file', input: { path: paired.machine.files.totp } }, () => {
        ran = true;
      }),
    ).toMatchObject({
      ok: false,
      reason: 'policy_violation',
      message: expect.stringContaining('latch: its secrets'),
    });
    expect(ran).toBe(false);
  });

  it('asks a phone at critical risk before an Edit of Claude Code’s settings', async () => {
    await askedAtCriticalRisk('Edit', {
      file_path: join(userHome, '.claude', 'settings.json'),
      old_string: '"PreToolUse"',
      new_string: '"Nothing"',
    });
  });

  it('says on the card that its own rule asks, and for which of its places: the word to type is that place’s name (phone walk)', async () => {
    const { relay, phones } = paired;
    const before = relay.requests.length;
    const settings = join(userHome, '.claude', 'settings.json');
    const answered = hook('Edit', {
      file_path: settings,
      old_string: '"PreToolUse"',
      new_string: '"Nothing"',
    });
    const request = await relay.nextRequest(before);
    const box = request.sealed.find((sealed) => sealed.device === phones[0].id)!.box;
    const details = await openRequestDetails(
      box,
      { privateKey: phones[0].ecdhKeys.privateKey, publicKeyRaw: phones[0].ecdhKeyRaw },
      { fleet: request.fleet, host: request.host, requestId: request.requestId, device: phones[0].id },
    );
    if (!details.ok) throw details.error;
    expect(details.value).toMatchObject({
      risk: 'critical',
      target: 'settings.json',
      notes: [`Asked by Latch's own rule "latch: agent hook settings", for ${settings}.`],
    });
    await relay.sendDenial(phones[0], request);
    expect((await answered).code).toBe(2);
  });

  it('asks a phone at critical risk before a Write of the settings where the agent’s CLAUDE_CONFIG_DIR points, not the daemon’s', async () => {
    const agentConfig = join(userHome, '.config', 'claude');
    await askedAtCriticalRisk(
      'Write',
      { file_path: join(agentConfig, 'settings.json'), content: '{}' },
      { CLAUDE_CONFIG_DIR: agentConfig },
    );
  });

  it('asks a phone at critical risk before a command that could stop the daemon', async () => {
    await askedAtCriticalRisk('Bash', { command: 'pkill -f "latch daemon"' });
  });

  it('asks a phone at critical risk before a command that runs a script which writes the shell’s start-up file', async () => {
    // Written by one tool call, run by the next: the command names nothing of Latch's.
    const script = join(mkdtempSync(join(tmpdir(), 'latch-script-')), 'setup.sh');
    onTestFinished(() => rmSync(dirname(script), { recursive: true, force: true }));
    writeFileSync(script, 'echo "exit 0" >> ~/.bashrc\n');
    await askedAtCriticalRisk('Bash', { command: `bash ${script}` });
  });

  it('leaves a call that touches nothing of Latch’s to the policy', async () => {
    const read = await hook('Read', { file_path: join(userHome, 'project', 'README.md') });
    expect(read.output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
  });
});

describe('self-protection beside a policy deny', () => {
  let paired: PairedDaemon;
  beforeAll(async () => {
    paired = await startPairedDaemon({
      policy:
        'default = "allow"\n[[rule]]\nname = "no watchers"\ncommand_regex = "watcher"\naction = "deny"\n',
    });
  });
  afterAll(() => paired.stop());

  it('leaves the refusal to the policy when it denies a call Latch would ask about', async () => {
    const ran = await startHook(
      paired.machine,
      hookInput('PreToolUse', 'Bash', { command: 'pkill -f watcher' }),
    );
    expect(ran.output).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: 'deny',
        permissionDecisionReason: 'latch: policy_violation: denied by policy rule "no watchers"',
      },
    });
    expect(paired.relay.requests).toHaveLength(0);
  });
});
