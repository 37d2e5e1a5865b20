import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { latchFiles } from '../../daemon/config/paths.ts';
import { ConfigKeeper } from '../../daemon/config/configKeeper.ts';
import { PolicyKeeper } from '../../daemon/policy/policyKeeper.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';
import { registrationChallenge } from '../../shared/pairing/registrationChallenge.ts';
import { verifyPasskeyRegistration } from '../../shared/pairing/verifyPasskeyRegistration.ts';
import type { PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { LATCH_BIN } from './latchCli.ts';
import { runToEnd, type Ran } from './processes.ts';

export type { Ran };

/** One machine's worth of Latch: its home, its runtime directory, the environment to run it in. */
export interface LatchMachine {
  home: string;
  runtime: string;
  socket: string;
  files: ReturnType<typeof latchFiles>;
  env: NodeJS.ProcessEnv;
}

export function newMachine(): LatchMachine {
  const root = mkdtempSync(join(tmpdir(), 'latch-daemon-'));
  const home = join(root, 'home');
  const runtime = join(root, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  return {
    home,
    runtime,
    socket: join(runtime, 'latch', 'daemon.sock'),
    files: latchFiles(home),
    env: {
      ...process.env,
      LATCH_HOME: home,
      XDG_RUNTIME_DIR: runtime,
      LATCH_AUDIT_CONTENT: '',
      // A user folder of its own: latch doctor and latch install read the agents' settings there.
      HOME: join(root, 'user'),
      CLAUDE_CONFIG_DIR: undefined,
      CODEX_HOME: undefined,
    },
  };
}

/** Runs the real `latch` executable, as a person or an agent would. */
export function runLatch(
  machine: LatchMachine,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<Ran> {
  return runToEnd([process.execPath, LATCH_BIN, ...args], {
    env: { ...machine.env, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
}

/**
 * `latch init` against a relay, then the policy the test wants, approved as a baseline. `name`
 * is the host's name (test-box by default); `fleet` joins that fleet instead of making a new one.
 * Tests approve and ask again far faster than people, so the push-fatigue defences (the burst
 * hold, "asked again after you denied") are off unless `pushFatigue` turns them on.
 */
export async function initMachine(
  machine: LatchMachine,
  options: {
    relay: string;
    quorum?: number;
    policy?: string;
    config?: (text: string) => string;
    name?: string;
    fleet?: string;
    pushFatigue?: boolean;
  },
): Promise<void> {
  const init = await runLatch(machine, [
    'init',
    '--relay',
    options.relay,
    '--name',
    options.name ?? 'test-box',
    '--quorum',
    String(options.quorum ?? 1),
    ...(options.fleet ? ['--fleet', options.fleet] : []),
  ]);
  if (init.code !== 0) throw new Error(`latch init failed: ${init.stderr}`);
  const withoutFatigue = (text: string) =>
    text
      .replace('burst_approvals = 5', 'burst_approvals = 1000')
      .replace('asked_again_seconds = 600', 'asked_again_seconds = 0');
  const ownSetUp = options.config ?? ((text: string) => text);
  const setUp = options.pushFatigue ? options.config : (text: string) => ownSetUp(withoutFatigue(text));
  if (setUp) {
    const config = setUp(readFileSync(machine.files.config, 'utf8'));
    writeFileSync(machine.files.config, config, { mode: 0o600 });
    // The person's own set-up, approved as a baseline like the policy below.
    withStore(machine, (store, audit) =>
      new ConfigKeeper(machine.files.config, store, audit).approve(config, 'test setup'),
    );
  }
  if (options.policy) {
    writeFileSync(machine.files.policy, options.policy, { mode: 0o600 });
    withStore(machine, (store, audit) =>
      new PolicyKeeper(machine.files.policy, store, audit).approve(options.policy!, 'test setup'),
    );
  }
}

export function withStore<T>(machine: LatchMachine, body: (store: StateStore, audit: AuditLog) => T): T {
  const store = new StateStore(machine.files.state);
  try {
    return body(store, new AuditLog(machine.files.audit, store, { redactContent: false }));
  } finally {
    store.close();
  }
}

/**
 * What pairing stores of `phone`: its keys, and a passkey registered (and verified) for `origin`
 * on `authenticator`, the phone's own unless a test puts another's in its place.
 */
export async function pairedDeviceOf(
  phone: TestPhone,
  origin: string,
  authenticator = phone.authenticator,
): Promise<PairedDevice> {
  const rpId = new URL(origin).hostname;
  const keys = { id: phone.id, deviceKey: phone.deviceKey, ecdhKey: phone.ecdhKey };
  const registration = await authenticator.register({
    rpId,
    origin,
    challenge: await registrationChallenge(keys),
  });
  const credential = await verifyPasskeyRegistration(keys, registration, { origins: [origin], rpId });
  return { ...keys, name: phone.name, credential };
}

/**
 * A phone paired with this machine, set up as `latch pair` leaves it: the passkey's public key
 * (from a real registration, verified), its device and encryption keys, and a host token.
 */
export async function pairPhoneDirectly(
  machine: LatchMachine,
  origin: string,
  options: { counter?: 'increment' | 'zero'; name?: string } = {},
): Promise<{ phone: TestPhone; device: PairedDevice }> {
  const phone = await createPhone(
    options.name ?? 'Test phone',
    options.counter ? { counter: options.counter } : {},
  );
  const device = await pairedDeviceOf(phone, origin);
  withStore(machine, (store) => store.addDevice(device, Date.now()));
  if (!existsSync(machine.files.hostToken))
    writeFileSync(machine.files.hostToken, `${'t'.repeat(43)}\n`, { mode: 0o600 });
  return { phone, device };
}

export interface RunningDaemon {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `latch daemon` and waits until it answers on its socket. */
export async function startDaemon(machine: LatchMachine): Promise<RunningDaemon> {
  const child = spawn(process.execPath, [LATCH_BIN, 'daemon'], {
    env: machine.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`latch daemon exited ${child.exitCode}:\n${output}`);
    const status = await runLatch(machine, ['status']);
    if (status.code === 0 || status.code === 1) break;
    if (Date.now() > deadline) {
      // Not left running behind the failure: nobody holds it to stop it.
      await stop();
      throw new Error(`latch daemon did not answer:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, output: () => output, stop };
}

/** startDaemon inside a test: the daemon is stopped when the test ends, whether it passed or failed. */
export async function startDaemonForTest(machine: LatchMachine): Promise<RunningDaemon> {
  const daemon = await startDaemon(machine);
  onTestFinished(() => daemon.stop());
  return daemon;
}

export function hookInput(
  event: 'PreToolUse' | 'PermissionRequest',
  tool: string,
  toolInput: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    session_id: 'session-1',
    transcript_path: '/tmp/transcript.jsonl',
    cwd: '/home/dev/project',
    permission_mode: 'default',
    hook_event_name: event,
    tool_name: tool,
    tool_input: toolInput,
    ...(event === 'PreToolUse' ? { tool_use_id: `toolu_${Math.random().toString(36).slice(2)}` } : {}),
    ...extra,
  });
}

/**
 * The decision Claude Code takes from a hook that ran, in the form of its JSON output: exit 2 is a
 * deny whose reason is stderr (stdout ignored); exit 0 is the JSON on stdout when stdout is JSON
 * alone, and otherwise no decision (plain text); any other exit is no decision either, and the
 * tool runs. Claude Code reads all of stderr; the reason given here is its last line, the deny's
 * own (a line before it says the phone was asked).
 */
export function claudeCodeReads(ran: Ran, input: string): Record<string, unknown> | undefined {
  if (ran.code === 2) {
    const reason = ran.stderr.trim().split('\n').at(-1);
    return {
      hookSpecificOutput: input.includes('"hook_event_name":"PermissionRequest"')
        ? { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: reason } }
        : { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
    };
  }
  if (ran.code !== 0 || !ran.stdout.trimStart().startsWith('{')) return undefined;
  return JSON.parse(ran.stdout) as Record<string, unknown>;
}

/**
 * Runs `latch hook claude-code` in the background: the answer arrives when someone decides.
 * `output` is what Claude Code reads of it (claudeCodeReads).
 */
export function startHook(
  machine: LatchMachine,
  input: string,
  timeoutMs = 60_000,
  env?: NodeJS.ProcessEnv,
): Promise<Ran & { output: Record<string, unknown> | undefined }> {
  return runLatch(machine, ['hook', 'claude-code'], { input, timeoutMs, ...(env ? { env } : {}) }).then(
    (ran) => ({ ...ran, output: claudeCodeReads(ran, input) }),
  );
}

/** The PreToolUse decision Claude Code takes from a hook that ran (claudeCodeReads), if any. */
export const claudeCodeDecision = (ran: Ran, input: string): string | undefined =>
  (claudeCodeReads(ran, input)?.['hookSpecificOutput'] as { permissionDecision?: string } | undefined)
    ?.permissionDecision;

/** What Claude Code hears from a PreToolUse hook. */
export type HookAnswer = Record<'hookEventName' | 'permissionDecision' | 'permissionDecisionReason', string>;

/** startHook for a PreToolUse `input` (hookInput): Claude Code's answer, once a phone decides. */
export function askHook(machine: LatchMachine, input: string): Promise<HookAnswer> {
  const answer = startHook(machine, input, 120_000).then(({ output, code, stderr }) => {
    if (!output) throw new Error(`the hook answered nothing (exit ${code}): ${stderr}`);
    return output['hookSpecificOutput'] as HookAnswer;
  });
  // A test that fails before it awaits the answer leaves the hook waiting: not a second failure.
  answer.catch(() => {});
  return answer;
}

export function auditLines(machine: LatchMachine): Record<string, unknown>[] {
  return readFileSync(machine.files.audit, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
