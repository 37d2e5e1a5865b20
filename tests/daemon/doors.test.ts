import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../daemon/sdk/latch.ts';
import { BrokenDaemon, type BrokenBehaviour } from '../support/brokenDaemon.ts';
import {
  claudeCodeReads,
  hookInput,
  initMachine,
  type LatchMachine,
  newMachine,
  type Ran,
  runLatch,
} from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { runToEnd } from '../support/processes.ts';

/**
 * Every door of Latch — both hooks, `latch request`, the SDK, the MCP gate — ends in an explicit
 * deny when the daemon behind it fails in any way: an agent runs the tool on anything else.
 * (`latch exec` has its own file: tests/daemon/exec.test.ts.)
 */

const MCP_SERVER = [
  'node',
  '--import',
  'tsx',
  new URL('../support/mcpTestServer.ts', import.meta.url).pathname,
];
const risky = () => hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Claude Code blocks on a deny in JSON (exit 0) or on exit 2; nothing else is a deny. */
function expectClaudeCodeDeny(ran: Ran, reason: RegExp): void {
  if (ran.code === 2) {
    expect(ran.stderr).toMatch(reason);
    return;
  }
  expect(ran.code).toBe(0);
  const output = JSON.parse(ran.stdout) as {
    hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string };
  };
  expect(output.hookSpecificOutput.permissionDecision).toBe('deny');
  expect(output.hookSpecificOutput.permissionDecisionReason).toMatch(reason);
}

/** One `tools/call` through `latch mcp`: resolves with the JSON-RPC message that answers it. */
function mcpToolCall(
  machine: LatchMachine,
): Promise<{ result?: { isError?: boolean; content: { text: string }[] } }> {
  const gate = spawn(process.execPath, [LATCH_BIN, 'mcp', '--name', 'notes', '--', ...MCP_SERVER], {
    env: machine.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  cleanups.push(() => {
    gate.kill('SIGKILL');
  });
  const answer = new Promise<{ result?: { isError?: boolean; content: { text: string }[] } }>((resolve) => {
    createInterface({ input: gate.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { id?: number };
      if (message.id === 7) resolve(message as never);
    });
  });
  gate.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'delete_note', arguments: { id: '1' } } })}\n`,
  );
  return answer;
}

/** Every door asks the same risky thing at once; resolves with what each answered. */
function askThroughEveryDoor(machine: LatchMachine, options: { timeoutSeconds?: number } = {}) {
  const timeout = options.timeoutSeconds;
  const ran = { runs: 0 };
  return {
    ran,
    claudeCode: runLatch(
      machine,
      ['hook', 'claude-code', ...(timeout ? ['--timeout', String(timeout + 5)] : [])],
      {
        input: risky(),
        timeoutMs: 60_000,
      },
    ),
    codex: runLatch(machine, ['hook', 'codex', ...(timeout ? ['--timeout', String(timeout + 5)] : [])], {
      input: risky(),
      timeoutMs: 60_000,
    }),
    request: runLatch(
      machine,
      ['request', '--title', 'deploy to prod', ...(timeout ? ['--timeout', String(timeout)] : [])],
      { timeoutMs: 60_000 },
    ),
    sdk: connect({ socketPath: machine.socket }).then((latch) =>
      latch.guard({ tool: 'deploy', risk: 'high', ...(timeout ? { timeoutSeconds: timeout } : {}) }, () => {
        ran.runs++;
      }),
    ),
    mcp: mcpToolCall(machine),
  };
}

async function expectEveryDoorDenied(
  doors: ReturnType<typeof askThroughEveryDoor>,
  reason: RegExp,
  code = 'daemon_unreachable',
) {
  expectClaudeCodeDeny(await doors.claudeCode, reason);
  const codex = await doors.codex;
  expect(codex.code).toBe(2);
  expect(codex.stderr).toMatch(reason);
  const request = await doors.request;
  expect(request.code).toBe(3);
  expect(request.stdout).toMatch(/^unavailable: /);
  expect(request.stdout).toMatch(reason);
  expect(await doors.sdk).toMatchObject({ ok: false, reason: 'unavailable', code });
  expect(doors.ran.runs).toBe(0);
  const mcp = await doors.mcp;
  expect(mcp.result?.isError).toBe(true);
  expect(mcp.result?.content[0]?.text).toMatch(reason);
}

describe('a daemon that dies while calls wait for a phone', () => {
  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`leaves every waiting door with an explicit deny (${signal})`, async () => {
      const paired: PairedDaemon = await startPairedDaemon();
      cleanups.push(() => paired.stop());
      const doors = askThroughEveryDoor(paired.machine);
      // Five requests reach the relay: every door is now waiting for a phone.
      await paired.relay.waitFor(() => paired.relay.requests.length === 5, 30_000);
      paired.daemon.child.kill(signal);
      await expectEveryDoorDenied(doors, /daemon_unreachable/);
    });
  }
});

describe('a daemon that answers wrong', () => {
  const cases: [BrokenBehaviour, RegExp, string?][] = [
    ['close', /daemon_unreachable: .*(closed|cannot be reached)/],
    ['garbage', /daemon_unreachable: the daemon answered something that is not an answer/],
    ['malformed-allow', /daemon_unreachable: the daemon answered something that is not an answer/],
    ['cut-after-pending', /daemon_unreachable: the daemon closed the connection without an answer/],
    // The daemon says the call is at fault: not a daemon to restart.
    ['refused', /invalid_request: the daemon refused the request: oops/, 'invalid_request'],
    ['http', /daemon_unreachable: the daemon speaks an older protocol/],
    ['pending-then-silence', /daemon_unreachable: the daemon gave no answer in time/],
    ['hang', /daemon_unreachable: the daemon gave no answer in time|no answer before the deadline/],
  ];
  for (const [behaviour, reason, code] of cases) {
    it(`is a deny at every door: ${behaviour}`, { timeout: 90_000 }, async () => {
      const machine = newMachine();
      await initMachine(machine, { relay: 'http://127.0.0.1:9' });
      const broken = await BrokenDaemon.listen(machine.socket);
      cleanups.push(() => broken.stop());
      broken.behaviour = behaviour;
      await expectEveryDoorDenied(askThroughEveryDoor(machine, { timeoutSeconds: 1 }), reason, code);
    });
  }
});

describe('a daemon whose deny reason is not fit to print', () => {
  it('reaches the agent and the terminal cleaned of escapes and newlines, and at most 4 KiB', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const broken = await BrokenDaemon.listen(machine.socket);
    cleanups.push(() => broken.stop());
    broken.behaviour = 'noisy-deny';
    const cleanReason = /^policy\[2J\]0;owned latch: approved x+…$/;

    const input = risky();
    const claudeCode = await runLatch(machine, ['hook', 'claude-code'], { input });
    const shown = (claudeCodeReads(claudeCode, input) as { hookSpecificOutput: Record<string, string> })
      .hookSpecificOutput['permissionDecisionReason']!;
    expect(shown.replace(/^latch: /, '')).toMatch(cleanReason);
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(4096 + 'latch: '.length);

    const codex = await runLatch(machine, ['hook', 'codex'], { input: risky() });
    expect(codex.code).toBe(2);
    expect(codex.stderr.trim().replace(/^latch: /, '')).toMatch(cleanReason);

    const request = await runLatch(machine, ['request', '--title', 'deploy to prod']);
    expect(request.code).toBe(1);
    expect(request.stdout).not.toMatch(/\u001b/);
    expect(request.stdout.trim().split('\n')).toHaveLength(1);
  });
});

describe('the hook’s own deadline', () => {
  it('asks the phone only for what the agent’s timeout leaves, whatever the policy allows, and denies before it', async () => {
    const paired = await startPairedDaemon({
      policy:
        'default = "ask"\n[[rule]]\nname = "a day to decide"\ntool = "Bash"\naction = "ask"\ntimeout_seconds = 86400\n',
    });
    cleanups.push(() => paired.stop());
    const hook = runLatch(paired.machine, ['hook', 'claude-code', '--timeout', '20'], {
      input: risky(),
      timeoutMs: 60_000,
    });
    const asked = await paired.relay.nextRequest(0);
    // 20 s for the hook leaves the phone 5 s: the daemon's expiry comes first, with time to print it.
    expect(asked.exp - asked.createdAt).toBeLessThanOrEqual(5_000);
    expectClaudeCodeDeny(await hook, /expired: no phone answered before the deadline/);
  });

  // A shell under a name of its own (nu, xonsh, a renamed bash): review ha, counted only for
  // names on a list of shells until then, so the agent killed the hook first.
  it.each(['sh', 'xonsh'])(
    'counts the agent’s timeout from when the hook’s shell (%s) started: a slow login shell spends it too',
    async (name) => {
      const paired = await startPairedDaemon({ policy: 'default = "ask"\n' });
      cleanups.push(() => paired.stop());
      const shell = join(dirname(paired.machine.home), name);
      copyFileSync('/bin/sh', shell);
      chmodSync(shell, 0o755);
      // Codex runs a hook with `$SHELL -lc`, whose login files run first: here they take 3 s.
      const hook = runToEnd(
        [
          shell,
          '-c',
          `sleep 3; "${process.execPath}" "${LATCH_BIN}" hook claude-code --timeout 20 || exit 2`,
        ],
        { env: paired.machine.env, input: risky(), timeoutMs: 60_000 },
      );
      const asked = await paired.relay.nextRequest(0);
      // 20 s from the shell's start leave the phone 5 s, of which the shell took 3.
      expect(asked.exp - asked.createdAt).toBeLessThanOrEqual(2_000);
      expectClaudeCodeDeny(await hook, /expired: no phone answered before the deadline/);
    },
  );
});

describe('latch hook on input it cannot take', () => {
  const machine = newMachine();
  const hook = (input: string | Buffer, args: string[] = []) =>
    runToEnd([process.execPath, LATCH_BIN, 'hook', 'claude-code', ...args], { env: machine.env, input });
  const nested = (depth: number) =>
    `{"session_id":"s","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;

  it.each([
    ['nested 5,000 levels deep', nested(5000), /nested more than 64 levels deep/],
    // Sent whole, it would be 32 MB indented: refused in the hook, before the daemon sees it.
    ['nested 65 levels deep', nested(65), /nested more than 64 levels deep/],
    ['not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /not UTF-8/],
    ['not JSON', 'rm -rf /', /not JSON/],
    [
      'without a tool name',
      JSON.stringify({ hook_event_name: 'PreToolUse', tool_input: {} }),
      /no tool_name/,
    ],
    ['over 1 MiB', JSON.stringify({ pad: 'x'.repeat(1_100_000) }), /over 1 MiB/],
  ])('blocks input %s with exit 2 and the reason', async (_name, input, reason) => {
    const ran = await hook(input);
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toMatch(reason);
  });

  it.each([['--timeout', 'abc'], ['--timeout', '-5'], ['--verbose']])(
    'blocks a hook command with a bad option (%s %s)',
    async (...args) => {
      const ran = await hook(
        risky(),
        args.filter((arg): arg is string => typeof arg === 'string'),
      );
      expect(ran.code).toBe(2);
      expect(ran.stderr).toMatch(/latch hook takes only --timeout <whole seconds>/);
    },
  );
});
