import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeHookOutput, parseClaudeCodeHookInput } from '../../daemon/hooks/claudeCode.ts';
import { codexHookReply } from '../../daemon/hooks/codex.ts';
import { backstopAfterMs, daemonDeadlineAfterMs } from '../../daemon/hooks/hookDeadline.ts';
import { claudeCodeReads, hookInput, runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { runToEnd } from '../support/processes.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
[[rule]]
name = "no secrets"
tool = "Read"
path = "*/.env"
action = "deny"
[[rule]]
name = "never drop prod"
tool = "Bash"
command = "*prod*"
action = "deny"
[[rule]]
name = "edits"
tool = "Edit"
action = "defer"
[[rule]]
name = "listing"
tool = "Bash"
command = "ls *"
action = "allow"
`;

let paired: PairedDaemon;
let machine: LatchMachine;

beforeAll(async () => {
  // "no secrets" comes after "reads", so it never matches: first rule wins.
  paired = await startPairedDaemon({ policy: POLICY });
  machine = paired.machine;
});

afterAll(() => paired.stop());

/** The hook's exit code and stderr, and its output: for Claude Code, what Claude Code reads of it. */
const hook = async (
  input: string,
  agent: 'claude-code' | 'codex' = 'claude-code',
  env?: NodeJS.ProcessEnv,
) => {
  const ran = await runLatch(machine, ['hook', agent], { input, ...(env ? { env } : {}) });
  return {
    code: ran.code,
    output:
      agent === 'claude-code'
        ? claudeCodeReads(ran, input)
        : ran.stdout.trim()
          ? (JSON.parse(ran.stdout) as unknown)
          : undefined,
    stderr: ran.stderr,
  };
};

/** A hook still running after 30 s would be killed by the agent, which then runs the tool: a failure. */
const exitedOrStillRunning = (exited: Promise<[number | null]>) =>
  Promise.race([
    exited,
    new Promise<['still running']>((resolve) => setTimeout(() => resolve(['still running']), 30_000)),
  ]);

describe('latch hook claude-code', () => {
  it('answers PreToolUse allow in Claude Code’s shape', async () => {
    expect(await hook(hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' }))).toEqual(
      {
        code: 0,
        stderr: '',
        output: {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'allow',
            permissionDecisionReason: 'latch: allowed by policy rule "reads"',
          },
        },
      },
    );
  });

  it('answers PreToolUse deny with the reason, as exit 2', async () => {
    expect(
      await hook(hookInput('PreToolUse', 'Bash', { command: 'psql prod -c "drop table users"' })),
    ).toMatchObject({
      code: 2,
      output: {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'latch: policy_violation: denied by policy rule "never drop prod"',
        },
      },
    });
  });

  it('denies all the same when a preload of the user’s NODE_OPTIONS printed on stdout first', async () => {
    // dotenv's `-r dotenv/config` prints such a line: a JSON deny after it is plain text to
    // Claude Code, which then runs the tool.
    const preload = join(mkdtempSync(join(tmpdir(), 'latch-preload-')), 'preload.cjs');
    writeFileSync(preload, "process.stdout.write('[dotenv@17.2.3] injecting env (0) from .env\\n');\n");
    const env = { NODE_OPTIONS: `--require ${preload}` };
    const input = hookInput('PreToolUse', 'Bash', { command: 'psql prod -c "drop table users"' });
    const denied = await hook(input, 'claude-code', env);
    expect(denied.code).toBe(2);
    expect(denied.output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    const permission = hookInput('PermissionRequest', 'Bash', { command: 'psql prod -c "drop table users"' });
    expect((await hook(permission, 'claude-code', env)).output).toMatchObject({
      hookSpecificOutput: { decision: { behavior: 'deny' } },
    });
  });

  it('answers PreToolUse ask when the policy defers to Claude Code’s own prompt', async () => {
    expect(
      await hook(
        hookInput('PreToolUse', 'Edit', {
          file_path: '/home/dev/project/a.ts',
          old_string: 'a',
          new_string: 'b',
        }),
      ),
    ).toMatchObject({
      code: 0,
      output: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' } },
    });
  });

  it.each(['bypassPermissions', 'dontAsk', 'auto', 'aModeFromTheFuture', undefined])(
    'asks a phone, never the agent’s own prompt, for a deferred call when permission_mode is %s',
    async (mode) => {
      const before = paired.relay.requests.length;
      const edit = hookInput(
        'PreToolUse',
        'Edit',
        { file_path: '/home/dev/project/a.ts', old_string: 'a', new_string: 'b' },
        { permission_mode: mode },
      );
      const answered = hook(edit);
      // Nobody would see Claude Code's prompt in this mode: the phone is asked instead.
      const asked = await paired.relay.nextRequest(before);
      await paired.relay.sendDenial(paired.phones[0], asked);
      expect((await answered).output).toMatchObject({
        hookSpecificOutput: {
          permissionDecision: 'deny',
          permissionDecisionReason: 'latch: denied on Test phone',
        },
      });
    },
  );

  it('leaves a command allowed by a rule to Claude Code’s own prompt when it is to run outside the sandbox', async () => {
    const listing = (fields: object, extra: Record<string, unknown> = {}) =>
      hookInput('PreToolUse', 'Bash', { command: 'ls -la', ...fields }, extra);
    expect((await hook(listing({}))).output).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    expect((await hook(listing({ dangerouslyDisableSandbox: false }))).output).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow' },
    });
    // Not a boolean, as a schema would have it, is read as outside the sandbox: the safe side.
    for (const outside of [true, 'true', 1])
      expect((await hook(listing({ dangerouslyDisableSandbox: outside }))).output).toMatchObject({
        hookSpecificOutput: {
          permissionDecision: 'ask',
          permissionDecisionReason:
            'latch: policy rule "listing" allows this, but it runs outside the agent\'s sandbox: the agent\'s own prompt decides',
        },
      });
    expect(
      (
        await hook(
          hookInput('PermissionRequest', 'Bash', { command: 'ls -la', dangerouslyDisableSandbox: true }),
        )
      ).output,
    ).toBeUndefined();
    // With no prompt of the agent's that a person would see, a phone is asked.
    const before = paired.relay.requests.length;
    const unattended = hook(
      listing({ dangerouslyDisableSandbox: true }, { permission_mode: 'bypassPermissions' }),
    );
    await paired.relay.sendDenial(paired.phones[0], await paired.relay.nextRequest(before));
    expect((await unattended).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
  });

  it('answers PermissionRequest allow and deny in Claude Code’s shape', async () => {
    expect((await hook(hookInput('PermissionRequest', 'Read', { file_path: '/x' }))).output).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
    expect((await hook(hookInput('PermissionRequest', 'Bash', { command: 'deploy prod' }))).output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: {
          behavior: 'deny',
          message: 'latch: policy_violation: denied by policy rule "never drop prod"',
        },
      },
    });
  });

  it('prints nothing for a PermissionRequest the policy defers, leaving Claude Code’s prompt', async () => {
    expect(await hook(hookInput('PermissionRequest', 'Edit', { file_path: '/x' }))).toEqual({
      code: 0,
      output: undefined,
      stderr: '',
    });
  });

  it('reads an input of many pipe buffers whole, and blocks one over 1 MiB', async () => {
    const large = hookInput('PreToolUse', 'Read', {
      file_path: '/home/dev/project/README.md',
      limit: 'x'.repeat(300_000),
    });
    expect((await hook(large)).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    const oversized = hookInput('PreToolUse', 'Read', {
      file_path: '/home/dev/project/README.md',
      limit: 'x'.repeat(1024 * 1024),
    });
    expect(await hook(oversized)).toMatchObject({
      code: 2,
      output: { hookSpecificOutput: { permissionDecision: 'deny' } },
      stderr: 'latch: the hook input is over 1 MiB\n',
    });
  });

  it('reads an input that arrives late on a non-blocking stdin whole', async () => {
    // The hook reads descriptor 0 with read(2); one left non-blocking answers EAGAIN until the
    // agent writes, and the hook must read on rather than take that for an input or an error.
    // spawn() makes a child's stdio blocking, so the flag is set after it, through the open file
    // description the child shares: a net.Socket on it (never read from) sets O_NONBLOCK, as
    // another Node process holding the same stdin would.
    const fifo = join(mkdtempSync(join(tmpdir(), 'latch-late-stdin-')), 'stdin');
    execFileSync('mkfifo', [fifo]);
    const stdin = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    const child = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code'], {
      env: machine.env,
      stdio: [stdin, 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit') as Promise<[number | null]>;
    const nonBlocking = new Socket({ fd: stdin, readable: false, writable: false });
    let writerOpen = true;
    try {
      let stdout = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const input = hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      writeSync(writer, input.slice(0, 20));
      await new Promise((resolve) => setTimeout(resolve, 100));
      writeSync(writer, input.slice(20));
      closeSync(writer);
      writerOpen = false;
      const [code] = await exited;
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    } finally {
      if (writerOpen) closeSync(writer);
      child.kill('SIGKILL');
      nonBlocking.destroy();
      rmSync(dirname(fifo), { recursive: true, force: true });
    }
  });

  it('answers when the agent writes its input but never closes stdin', async () => {
    // Claude Code has shipped releases that leave a hook's stdin open: the hook reads up to a
    // whole JSON value rather than waiting for an end that never comes.
    const child = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code'], {
      env: machine.env,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    try {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = once(child, 'exit') as Promise<[number | null]>;
      const input = hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' });
      child.stdin.write(input.slice(0, 20));
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.stdin.write(input.slice(20));
      const [code] = await exitedOrStillRunning(exited);
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it.each(['1', '2', '5'])(
    'answers a policy allow under --timeout %s, which leaves the daemon a fraction of a second',
    async (seconds) => {
      const ran = await runLatch(machine, ['hook', 'claude-code', '--timeout', seconds], {
        input: hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' }),
      });
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    },
  );

  it('waits for the daemon for a while, then answers itself, before the agent’s kill, at every --timeout', () => {
    for (let seconds = 1; seconds <= 700; seconds++) {
      const daemonDeadline = daemonDeadlineAfterMs(seconds);
      expect(daemonDeadline).toBeGreaterThanOrEqual(Math.min(500, seconds * 250));
      expect(backstopAfterMs(seconds)).toBeGreaterThan(daemonDeadline);
      expect(backstopAfterMs(seconds)).toBeLessThan(seconds * 1000);
    }
    expect(daemonDeadlineAfterMs(1)).toBe(250);
    expect(daemonDeadlineAfterMs(600)).toBe(594_500);
  });

  it('blocks with exit 2 at its deadline when the agent never writes its input nor closes stdin', async () => {
    const child = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code', '--timeout', '6'], {
      env: machine.env,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    try {
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = await exitedOrStillRunning(once(child, 'exit') as Promise<[number | null]>);
      expect(code).toBe(2);
      expect(stderr).toMatch(/^latch: no answer before the deadline/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('blocks with exit 2, not 0, when its answer cannot be written (the reader hung up)', async () => {
    const child = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code'], {
      env: machine.env,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    child.stdout.destroy();
    child.stdin.end(hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' }));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
  });

  it('blocks with exit 2 at its deadline when its stdout stays full (nobody reads the pipe)', async () => {
    // A pipe already full, that nobody drains: the hook's write waits on it, and that wait blocks
    // the event loop, where its own deadline timer runs.
    const fifo = join(mkdtempSync(join(tmpdir(), 'latch-full-pipe-')), 'stdout');
    execFileSync('mkfifo', [fifo]);
    const full = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      const chunk = Buffer.alloc(4096, 0x78);
      for (;;) {
        try {
          writeSync(full, chunk);
        } catch {
          break; // EAGAIN: full
        }
      }
      const child = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code', '--timeout', '6'], {
        env: machine.env,
        stdio: ['pipe', full, 'ignore'],
      });
      child.stdin!.end(hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' }));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(2);
    } finally {
      closeSync(full);
    }
  });

  it('blocks with exit 2, not 0, when started without a stdout (Node points it at /dev/null)', async () => {
    const input = hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' });
    const ran = await runToEnd(
      ['/bin/sh', '-c', `exec "$0" "$1" hook claude-code >&-`, process.execPath, LATCH_BIN],
      {
        env: machine.env,
        input,
      },
    );
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^latch: internal error: stdout is \/dev\/null/m);
  });

  it('blocks with exit 2 when its bundle was cut short (an upgrade writing it, a full disk), wherever the cut', async () => {
    // A copy of the package's two files: the real dist/ is the other tests'.
    const root = mkdtempSync(join(tmpdir(), 'latch-cut-bundle-'));
    mkdirSync(join(root, 'daemon', 'bin'), { recursive: true });
    mkdirSync(join(root, 'dist', 'latch'), { recursive: true });
    copyFileSync(LATCH_BIN, join(root, 'daemon', 'bin', 'latch.cjs'));
    const lines = readFileSync(
      join(dirname(LATCH_BIN), '..', '..', 'dist', 'latch', 'hook.cjs'),
      'utf8',
    ).split('\n');
    const input = hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });
    try {
      for (const cut of [
        0,
        1,
        ...Array.from({ length: 24 }, (_, n) => Math.floor(((n + 1) * lines.length) / 25)),
      ]) {
        writeFileSync(join(root, 'dist', 'latch', 'hook.cjs'), lines.slice(0, cut).join('\n'));
        const ran = await runToEnd(
          [process.execPath, join(root, 'daemon', 'bin', 'latch.cjs'), 'hook', 'claude-code'],
          {
            env: machine.env,
            input,
          },
        );
        expect({ cut, code: ran.code }).toEqual({ cut, code: 2 });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('blocks with exit 2 on input it cannot read', async () => {
    for (const input of [
      'not json',
      '[]',
      JSON.stringify({ hook_event_name: 'PostToolUse', tool_name: 'Bash' }),
      JSON.stringify({ hook_event_name: 'PreToolUse' }),
    ]) {
      const result = await hook(input);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^latch: /);
    }
  });
});

describe('latch hook codex', () => {
  // Codex adds turn_id and model to Claude Code's fields.
  const codexInput = (
    event: 'PreToolUse' | 'PermissionRequest',
    tool: string,
    toolInput: Record<string, unknown>,
  ) => hookInput(event, tool, toolInput, { turn_id: 'turn-1', model: 'gpt-5-codex' });

  it('prints nothing for a PreToolUse the policy allows, so Codex goes on', async () => {
    expect(
      await hook(codexInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' }), 'codex'),
    ).toEqual({
      code: 0,
      output: undefined,
      stderr: '',
    });
  });

  it('blocks a denied PreToolUse with exit 2 and the reason, never with an allow or ask Codex would ignore', async () => {
    expect(
      await hook(codexInput('PreToolUse', 'Bash', { command: 'psql prod -c "drop table users"' }), 'codex'),
    ).toEqual({
      code: 2,
      output: undefined,
      stderr: 'latch: policy_violation: denied by policy rule "never drop prod"\n',
    });
  });

  it('asks a phone at critical risk about a command that may run in Latch’s home: Codex does not say its workdir', async () => {
    // Allowed by the "listing" rule for Claude Code, whose hook input names the command's folder.
    expect((await hook(hookInput('PreToolUse', 'Bash', { command: 'ls *' }))).code).toBe(0);
    const before = paired.relay.requests.length;
    const answered = hook(codexInput('PreToolUse', 'Bash', { command: 'ls *' }), 'codex');
    const asked = await paired.relay.nextRequest(before);
    const { details } = await phoneApproves(paired.phones[0]!, asked, paired.relay.origin);
    expect(details).toMatchObject({ risk: 'critical' });
    await paired.relay.sendDenial(paired.phones[0]!, asked);
    expect(await answered).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/\nlatch: denied on Test phone\n$/),
    });
  });

  it('judges the files a Codex patch writes as a file tool’s: a subagent in the project’s .claude asks at critical', async () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: src/a.ts',
      '@@',
      '-a',
      '+b',
      '  *** Add File: .claude/agents/helper.md  ',
      '+---',
      '+hooks: {}',
      '*** End Patch',
    ].join('\n');
    expect(
      parseClaudeCodeHookInput(codexInput('PreToolUse', 'apply_patch', { command: patch })),
    ).toMatchObject({
      question: { paths: ['src/a.ts', '.claude/agents/helper.md'] },
    });
    const before = paired.relay.requests.length;
    const answered = hook(codexInput('PreToolUse', 'apply_patch', { command: patch }), 'codex');
    const asked = await paired.relay.nextRequest(before);
    const { details } = await phoneApproves(paired.phones[0]!, asked, paired.relay.origin);
    expect(details).toMatchObject({ risk: 'critical' });
    await paired.relay.sendDenial(paired.phones[0]!, asked);
    expect((await answered).code).toBe(2);
  });

  it('reads a Codex patch’s relative files as from any folder: Codex may apply it in a workdir it does not say', async () => {
    const patch = ['*** Begin Patch', '*** Update File: .bashrc', '@@', '-a', '+b', '*** End Patch'].join(
      '\n',
    );
    const before = paired.relay.requests.length;
    const answered = hook(codexInput('PreToolUse', 'apply_patch', { command: patch }), 'codex');
    const asked = await paired.relay.nextRequest(before);
    const { details } = await phoneApproves(paired.phones[0]!, asked, paired.relay.origin);
    expect(details).toMatchObject({ risk: 'critical' });
    await paired.relay.sendDenial(paired.phones[0]!, asked);
    expect((await answered).code).toBe(2);
  });

  it('reads Codex’s escalation as leaving the sandbox, an argv as its command, and a patch header as Codex trims it (review R5)', async () => {
    const parsed = (
      event: 'PreToolUse' | 'PermissionRequest',
      tool: string,
      toolInput: Record<string, unknown>,
    ) => parseClaudeCodeHookInput(codexInput(event, tool, toolInput));
    for (const escalated of [
      { sandbox_permissions: 'require_escalated' },
      { with_escalated_permissions: true },
    ])
      expect(parsed('PermissionRequest', 'Bash', { command: 'ls -la', ...escalated })).toMatchObject({
        question: { unsandboxed: true },
      });
    expect(
      parsed('PermissionRequest', 'Bash', { command: 'ls -la', sandbox_permissions: 'use_default' }),
    ).not.toHaveProperty('question.unsandboxed');
    expect(parsed('PreToolUse', 'Bash', { command: ['bash', '-lc', 'rm -rf ~/.latch'] })).toMatchObject({
      question: { command: "bash -lc 'rm -rf ~/.latch'" },
    });
    const patch = '*** Begin Patch\n\u0085*** Add File: .codex/hooks.json\u0085\n+{}\n*** End Patch';
    expect(parsed('PreToolUse', 'apply_patch', { command: patch })).toMatchObject({
      question: { paths: ['.codex/hooks.json'] },
    });
    // Escalated, a command a rule allows is left to Codex's own prompt, as for Claude Code.
    expect(
      (
        await hook(
          codexInput('PermissionRequest', 'Bash', {
            command: 'ls -la',
            sandbox_permissions: 'require_escalated',
          }),
          'codex',
        )
      ).output,
    ).toBeUndefined();
  });

  it('answers PermissionRequest in the shape Codex shares with Claude Code', async () => {
    expect(
      (await hook(codexInput('PermissionRequest', 'Read', { file_path: '/x' }), 'codex')).output,
    ).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
    expect(
      await hook(codexInput('PermissionRequest', 'Bash', { command: 'deploy prod' }), 'codex'),
    ).toMatchObject({
      code: 0,
      output: { hookSpecificOutput: { decision: { behavior: 'deny' } } },
    });
  });

  it('blocks with exit 2 on input it cannot read', async () => {
    const result = await hook(JSON.stringify({ hook_event_name: 'Stop' }), 'codex');
    expect(result).toMatchObject({ code: 2, output: undefined });
    expect(result.stderr).toBe(
      'latch: the hook input\'s hook_event_name "Stop" is neither PreToolUse nor PermissionRequest\n',
    );
    const cases: [object, string][] = [
      [{ tool_name: 'Bash', tool_input: { command: 'ls' } }, 'the hook input has no hook_event_name'],
      [
        { hook_event_name: `Stop${'x'.repeat(5000)}`, tool_name: 'Bash' },
        `the hook input's hook_event_name "Stop${'x'.repeat(60)}" is neither PreToolUse nor PermissionRequest`,
      ],
      [{ hook_event_name: 'PreToolUse', tool_input: {} }, 'the hook input has no tool_name'],
      [
        { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: 'rm -rf /' },
        "the hook input's tool_input is not a JSON object",
      ],
      [
        { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: ['rm -rf /'] },
        "the hook input's tool_input is not a JSON object",
      ],
    ];
    for (const [input, reason] of cases) {
      const refused = await hook(JSON.stringify(input), 'codex');
      expect(refused).toMatchObject({ code: 2, output: undefined, stderr: `latch: ${reason}\n` });
    }
  });

  it('never lets a deny or an expiry through on either event', () => {
    for (const event of ['PreToolUse', 'PermissionRequest'] as const) {
      for (const blockReason of ['denied', 'expired', 'kill_switch'] as const) {
        const reason = `${blockReason}: x`;
        const reply = codexHookReply(event, { decision: 'deny', reason, blockReason });
        expect(reply).toEqual(
          event === 'PreToolUse'
            ? { block: reason }
            : {
                stdout: {
                  hookSpecificOutput: {
                    hookEventName: 'PermissionRequest',
                    decision: { behavior: 'deny', message: `latch: ${reason}` },
                  },
                },
              },
        );
      }
    }
  });
});

describe('the Claude Code mapping', () => {
  it('reads the tool, command, paths, session and tool call from the hook input', () => {
    const parsed = parseClaudeCodeHookInput(
      hookInput(
        'PreToolUse',
        'Bash',
        { command: 'ls', description: 'List files' },
        { tool_use_id: 'toolu_1' },
      ),
    );
    expect(parsed).toMatchObject({
      event: 'PreToolUse',
      question: {
        tool: 'Bash',
        command: 'ls',
        title: 'List files',
        session: 'session-1',
        toolUseId: 'toolu_1',
        cwd: '/home/dev/project',
      },
    });
    expect(
      parseClaudeCodeHookInput(hookInput('PreToolUse', 'Write', { file_path: '/a/b.txt', content: 'x' })),
    ).toMatchObject({
      question: { paths: ['/a/b.txt'], diff: '--- /dev/null\n+++ /a/b.txt\n@@ -0,0 +1 @@\n+x\n' },
    });
  });

  it('never maps a deny or a defer to allow', () => {
    const deny = { decision: 'deny', reason: 'denied on Test phone', blockReason: 'denied' } as const;
    const defer = { decision: 'defer', reason: 'the policy asks Claude Code' } as const;
    expect(claudeCodeHookOutput('PreToolUse', deny)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'latch: denied on Test phone',
      },
    });
    // A PreToolUse defer hands the call to Claude Code's own prompt.
    expect(claudeCodeHookOutput('PreToolUse', defer)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: 'latch: the policy asks Claude Code',
      },
    });
    expect(claudeCodeHookOutput('PermissionRequest', deny)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: 'latch: denied on Test phone' },
      },
    });
    // A PermissionRequest defer prints nothing, which leaves the prompt Claude Code is about to show.
    expect(claudeCodeHookOutput('PermissionRequest', defer)).toBeUndefined();
  });
});
