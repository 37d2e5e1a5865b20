import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LatchClient } from '../../daemon/sdk/latch.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { StandInRelay } from '../support/standInRelay.ts';
import { fleetOf } from '../support/killSwitchRelay.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

const POLICY = `
default = "ask"
[[rule]]
tool = "read_report"
action = "allow"
[[rule]]
tool = "drop_database"
action = "deny"
`;

let relay: StandInRelay;
let machine: LatchMachine;
let phone: TestPhone;
let latch: LatchClient;
let paired: PairedDaemon;

beforeAll(async () => {
  paired = await startPairedDaemon({ policy: POLICY });
  ({ relay, machine } = paired);
  [phone] = paired.phones;
  latch = await connect({ socketPath: machine.socket, agent: 'sdk-test' });
});

afterAll(() => paired.stop());

const nestedArray = (depth: number): unknown => (depth === 0 ? 'x' : [nestedArray(depth - 1)]);

/** A function that counts its runs. */
function counted<T>(value: T) {
  const fn = () => {
    fn.runs++;
    return value;
  };
  fn.runs = 0;
  return fn;
}

describe('the SDK guard', () => {
  it('runs a call the policy allows, once, without asking the relay', async () => {
    const fn = counted('report');
    const before = relay.requests.length;
    expect(await latch.guard({ tool: 'read_report' }, fn)).toEqual({ ok: true, value: 'report' });
    expect(fn.runs).toBe(1);
    expect(relay.requests.length).toBe(before);
  });

  it('does not run a call the policy denies, and nothing leaves the machine', async () => {
    const fn = counted('dropped');
    const before = relay.requests.length;
    expect(await latch.guard({ tool: 'drop_database', risk: 'critical' }, fn)).toMatchObject({
      ok: false,
      reason: 'policy_violation',
    });
    expect(fn.runs).toBe(0);
    expect(relay.requests.length).toBe(before);
  });

  it('waits for the phone, and runs once it approved', async () => {
    const fn = counted('deployed');
    const before = relay.requests.length;
    const result = latch.guard({ tool: 'deploy', input: { target: 'prod' }, risk: 'high' }, fn);
    const request = await relay.nextRequest(before);
    expect(fn.runs).toBe(0);
    const { token, details } = await phoneApproves(phone, request, relay.origin);
    expect(details).toMatchObject({ tool: 'deploy', agent: 'sdk-test', risk: 'high' });
    expect(details.detail).toContain('"target": "prod"');
    relay.sendApproval(request.requestId, token);
    expect(await result).toEqual({ ok: true, value: 'deployed' });
    expect(fn.runs).toBe(1);
  });

  it('runs a gated function exactly once even when the relay delivers the decision twice', async () => {
    const deploy = counted('deployed');
    const gated = latch.gated(
      (target: string) => deploy() + ` to ${target}`,
      (target) => ({ tool: 'deploy', input: { target } }),
    );
    const before = relay.requests.length;
    const result = gated('staging');
    const request = await relay.nextRequest(before);
    const { token } = await phoneApproves(phone, request, relay.origin);
    const approved = {
      v: PROTOCOL_VERSION,
      type: 'approved',
      requestId: request.requestId,
      token,
      at: Date.now(),
    } as const;
    relay.send(approved);
    relay.send(approved);
    expect(await result).toEqual({ ok: true, value: 'deployed to staging' });
    await framesHandled(machine, relay);
    expect(deploy.runs).toBe(1);
  });

  it('does not run a call the phone denies', async () => {
    const fn = counted('x');
    const before = relay.requests.length;
    const result = latch.guard({ tool: 'deploy' }, fn);
    const request = await relay.nextRequest(before);
    await relay.sendDenial(phone, request);
    expect(await result).toMatchObject({ ok: false, reason: 'denied' });
    expect(fn.runs).toBe(0);
  });

  it('reads relative paths from the caller’s folder, or the cwd it names: Latch’s own file asks a phone', async () => {
    // `read_report` is allowed by the policy: only self-protection can ask.
    const policyFile = join(machine.home, 'policy.toml');
    for (const call of [
      { tool: 'read_report', paths: [relative(process.cwd(), policyFile)] },
      { tool: 'read_report', paths: ['policy.toml'], cwd: machine.home },
    ]) {
      const fn = counted('x');
      const before = relay.requests.length;
      const result = latch.guard(call, fn);
      const request = await relay.nextRequest(before);
      const { details } = await phoneApproves(phone, request, relay.origin);
      expect(details).toMatchObject({ risk: 'critical' });
      await relay.sendDenial(phone, request);
      expect(await result).toMatchObject({ ok: false, reason: 'denied' });
      expect(fn.runs).toBe(0);
    }
  });

  it('does not run a call nobody answers in time', async () => {
    const fn = counted('x');
    expect(await latch.guard({ tool: 'deploy', timeoutSeconds: 5 }, fn)).toMatchObject({
      ok: false,
      reason: 'expired',
    });
    expect(fn.runs).toBe(0);
  });

  it('lets a call shorten the wait for a phone, never lengthen it past the configured 300 s', async () => {
    const before = relay.requests.length;
    const result = latch.guard({ tool: 'deploy', timeoutSeconds: 86_400 }, counted('x'));
    const request = await relay.nextRequest(before);
    expect(request.exp - request.createdAt).toBe(300_000);
    relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: request.requestId, at: Date.now() });
    expect(await result).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('runs a gated function on the arguments the phone saw, its own to change, though the caller changed its own during the wait', async () => {
    const ran: unknown[] = [];
    const described: boolean[] = [];
    const deploy = latch.gated(
      (options: { target: string; steps: string[] }) => {
        ran.push(JSON.stringify(options), Object.isFrozen(options));
        // Review rv7: a function that sorts or fills in its arguments did throw on a frozen copy.
        options.steps.sort();
        options.steps.push('done');
        return options.target;
      },
      (options) => {
        described.push(Object.isFrozen(options), Object.isFrozen(options.steps));
        return { tool: 'deploy', input: options, risk: 'high', title: `Deploy ${options.target}` };
      },
    );
    const options = { target: 'staging', steps: ['build'] };
    const before = relay.requests.length;
    const result = deploy(options);
    const request = await relay.nextRequest(before);
    options.target = 'production';
    options.steps.push('drop the database');
    const { token, details } = await phoneApproves(phone, request, relay.origin);
    // The caller's title is its words (review kd); the input the function runs on is what the card shows.
    expect(details.description).toBe('Deploy staging');
    expect(details.detail).toContain('"staging"');
    expect(details.detail).not.toMatch(/production|drop the database/);
    relay.sendApproval(request.requestId, token);
    expect(await result).toEqual({ ok: true, value: 'staging' });
    expect(described).toEqual([true, true]);
    expect(ran).toEqual(['{"target":"staging","steps":["build"]}', false]);
  });

  it('hands run the input as it was sent, frozen: not the caller’s object, changed during the wait', async () => {
    const given: unknown[] = [];
    const input = { amount: 100, to: 'bob' };
    const before = relay.requests.length;
    const result = latch.guard({ tool: 'transfer', input, risk: 'high' }, (sent) => {
      given.push(sent, Object.isFrozen(sent));
      return 'sent';
    });
    const request = await relay.nextRequest(before);
    input.to = 'mallory';
    const { token, details } = await phoneApproves(phone, request, relay.origin);
    expect(details.detail).toContain('"to": "bob"');
    relay.sendApproval(request.requestId, token);
    expect(await result).toEqual({ ok: true, value: 'sent' });
    expect(given).toEqual([{ amount: 100, to: 'bob' }, true]);
  });

  it('refuses, invalid_request, to gate arguments it cannot copy whole, without asking or running', async () => {
    class Account {
      readonly #key = 'secret';
      key = () => this.#key;
    }
    class Wallet {
      owner = 'bob';
    }
    const fn = counted('x');
    const before = relay.requests.length;
    for (const [what, argument] of [
      ['a function', () => 'callback'],
      ['a class instance in an object', { to: new Wallet() }],
      ['a class instance with private state', new Account()],
    ] as const) {
      const gated = latch.gated((_argument: unknown) => fn(), { tool: 'read_report' });
      expect(await gated(argument), what).toMatchObject({
        ok: false,
        code: 'invalid_request',
        message: expect.stringContaining('the arguments cannot be copied for the phone and the run'),
      });
    }
    expect(fn.runs).toBe(0);
    expect(relay.requests.length).toBe(before);
    // What structuredClone copies whole runs: dates, maps, a record without a prototype.
    const whole = latch.gated(
      (when: Date, seen: Map<string, number>, bare: Record<string, number>) =>
        `${when.getUTCFullYear()} ${seen.get('a')} ${bare['b']}`,
      { tool: 'read_report' },
    );
    const bare = Object.assign(Object.create(null) as Record<string, number>, { b: 2 });
    expect(await whole(new Date(Date.UTC(2026, 0, 1)), new Map([['a', 1]]), bare)).toEqual({
      ok: true,
      value: '2026 1 2',
    });
    // A Buffer stays one (review rv7: it was refused as a class instance).
    const write = latch.gated((data: Buffer) => data.toString('utf8'), { tool: 'read_report' });
    expect(await write(Buffer.from('hi'))).toEqual({ ok: true, value: 'hi' });
  });

  it('runs once for one approval when the same call (session, call id, content) is guarded three times at once', async () => {
    let runs = 0;
    const call = {
      tool: 'transfer',
      input: { amount: 100, to: 'bob' },
      risk: 'high' as const,
      session: 'sdk-join',
      callId: 'call-1',
    };
    const before = relay.requests.length;
    const first = latch.guard(call, () => ++runs);
    const request = await relay.nextRequest(before);
    const others = [latch.guard(call, () => ++runs), latch.guard(call, () => ++runs)];
    const { token } = await phoneApproves(phone, request, relay.origin);
    relay.sendApproval(request.requestId, token);
    expect(await Promise.all([first, ...others])).toEqual([1, 1, 1].map((value) => ({ ok: true, value })));
    expect(runs).toBe(1);
    expect(relay.requests.length).toBe(before + 1);
  });

  it('answers aborted at once when its caller gives up, withdraws the request, and runs nothing when the phone approves after', async () => {
    const fn = counted('deployed');
    const before = relay.requests.length;
    const giveUp = new AbortController();
    const result = latch.guard({ tool: 'deploy', input: { target: 'prod' }, signal: giveUp.signal }, fn);
    const request = await relay.nextRequest(before);
    giveUp.abort();
    expect(await result).toEqual({
      ok: false,
      reason: 'aborted',
      code: 'aborted',
      message: 'the caller gave up before the call was allowed',
    });
    await expect.poll(() => relay.withdrawals).toContain(request.requestId);
    const { token } = await phoneApproves(phone, request, relay.origin);
    relay.sendApproval(request.requestId, token);
    await framesHandled(machine, relay);
    expect(fn.runs).toBe(0);
  });

  it('asks nothing for a signal already aborted, and refuses a signal that is not an AbortSignal', async () => {
    const fn = counted('x');
    const before = relay.requests.length;
    expect(await latch.guard({ tool: 'deploy', signal: AbortSignal.abort() }, fn)).toMatchObject({
      ok: false,
      reason: 'aborted',
    });
    const notASignal = { aborted: false, addEventListener: () => {} } as unknown as AbortSignal;
    expect(await latch.guard({ tool: 'deploy', signal: notASignal }, fn)).toMatchObject({
      ok: false,
      code: 'invalid_request',
      message: 'signal must be an AbortSignal',
    });
    expect(fn.runs).toBe(0);
    expect(relay.requests.length).toBe(before);
  });

  it('keeps a joined call waiting for the guards that did not give up, and runs the function of one of them, once', async () => {
    const ran: string[] = [];
    const call = { tool: 'transfer', input: { amount: 5 }, session: 'sdk-abort-join', callId: 'call-1' };
    const before = relay.requests.length;
    const giveUp = new AbortController();
    const leaving = latch.guard({ ...call, signal: giveUp.signal }, () => ran.push('the guard that gave up'));
    const request = await relay.nextRequest(before);
    const staying = latch.guard(call, () => ran.push('the guard that waited'));
    giveUp.abort();
    expect(await leaving).toMatchObject({ ok: false, reason: 'aborted' });
    const { token } = await phoneApproves(phone, request, relay.origin);
    relay.sendApproval(request.requestId, token);
    expect(await staying).toEqual({ ok: true, value: 1 });
    expect(ran).toEqual(['the guard that waited']);
    expect(relay.withdrawals).not.toContain(request.requestId);
  });

  it('rejects with the function’s own error when a guard with a signal runs a function that throws', async () => {
    const guarded = latch.guard({ tool: 'read_report', signal: new AbortController().signal }, () => {
      throw new Error('the report is gone');
    });
    await expect(guarded).rejects.toThrow('the report is gone');
  });

  it('refuses a session or call id over 256 bytes or with invisible characters, which would be cut or cleaned into another call’s', async () => {
    let runs = 0;
    const long = 'A'.repeat(300);
    const base = { tool: 'transfer', input: { amount: 100 }, risk: 'high' as const };
    const before = relay.requests.length;
    for (const call of [
      { ...base, session: 's', callId: `${long}-first` },
      { ...base, session: `${long}-first`, callId: 'c' },
      { ...base, session: 's', callId: 'call-7\u200b' },
    ])
      expect(await latch.guard(call, () => ++runs)).toMatchObject({
        ok: false,
        code: 'invalid_request',
        message: expect.stringMatching(
          /(session|toolUseId) must be at most 256 bytes, without control or invisible characters/,
        ),
      });
    expect(runs).toBe(0);
    expect(relay.requests.length).toBe(before);
  });

  it('refuses every call while frozen, with kill_switch, without asking the relay', async () => {
    const envelope = await signEnvelope(
      'freeze',
      { fleet: fleetOf(machine), reason: 'sdk test' },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    relay.send({ v: PROTOCOL_VERSION, type: 'frozen', epoch: 1, envelope, at: Date.now() });
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(1);
    const fn = counted('x');
    const before = relay.requests.length;
    expect(await latch.guard({ tool: 'read_report' }, fn)).toMatchObject({
      ok: false,
      reason: 'kill_switch',
    });
    expect(await latch.guard({ tool: 'deploy' }, fn)).toMatchObject({ ok: false, reason: 'kill_switch' });
    expect(fn.runs).toBe(0);
    expect(relay.requests.length).toBe(before);
  });

  it('gives { ok: false } and runs nothing when the daemon is down', async () => {
    const down = await connect({
      socketPath: join(mkdtempSync(join(tmpdir(), 'latch-sdk-')), 'daemon.sock'),
    });
    const fn = counted('x');
    expect(await down.guard({ tool: 'read_report' }, fn)).toMatchObject({
      ok: false,
      reason: 'unavailable',
      code: 'daemon_unreachable',
    });
    expect(fn.runs).toBe(0);
  });

  it('says invalid_request, not daemon_unreachable, for a call that is at fault, and runs nothing', async () => {
    const fn = counted('x');
    const faulty: [string, Parameters<LatchClient['guard']>[0], string][] = [
      ['no tool', { tool: '' }, 'the daemon refused the request: tool is required'],
      // From JavaScript, where the types do not hold.
      [
        'a tool that is a number',
        { tool: 5 as never },
        'the daemon refused the request: tool must be a string',
      ],
      [
        'a getter that throws',
        {
          get tool(): string {
            throw new Error('no tool here');
          },
        },
        'the call cannot be read: no tool here',
      ],
      [
        'a call id over 256 bytes',
        { tool: 'read_report', session: 's', callId: 'A'.repeat(257) },
        'the daemon refused the request: toolUseId must be at most 256 bytes',
      ],
      ['a BigInt', { tool: 'read_report', input: { rows: 10n } }, 'the call cannot be written as JSON'],
      [
        'nested 4,000 deep',
        { tool: 'read_report', input: nestedArray(4000) },
        'the daemon refused the request: the tool input is nested more than 64 levels deep',
      ],
      [
        'over 1 MiB',
        { tool: 'read_report', input: 'x'.repeat(1024 * 1024) },
        'the call is over 1048576 bytes, the most the daemon reads',
      ],
      ['a timeout below 1 s', { tool: 'read_report', timeoutSeconds: -5 }, 'timeoutSeconds must be'],
      // From JavaScript, where the types do not hold.
      ['null', null as never, 'a guarded call is an object naming its tool'],
      [
        'paths as one string',
        { tool: 'read_report', paths: '/home/u/.ssh/id_ed25519' as never },
        'the daemon refused the request: paths must be a list of strings',
      ],
      [
        'an unknown risk',
        { tool: 'deploy', risk: 'extreme' as never },
        'the daemon refused the request: risk must be one of low, medium, high, critical',
      ],
    ];
    for (const [what, call, message] of faulty)
      expect(await latch.guard(call, fn), what).toMatchObject({
        ok: false,
        reason: 'unavailable',
        code: 'invalid_request',
        message: expect.stringContaining(message),
      });
    expect(fn.runs).toBe(0);
    // A gated function whose `meta` throws rejects, as a promise: it does not throw at the call.
    const gated = latch.gated(fn, () => {
      throw new Error('no meta for this');
    });
    let called: Promise<unknown> | undefined;
    expect(() => (called = gated())).not.toThrow();
    await expect(called).rejects.toThrow('no meta for this');
    expect(fn.runs).toBe(0);
  });

  it('resolves once, and runs once, even if a daemon answers twice on the socket', async () => {
    // A daemon stand-in that writes its allow answer twice.
    const directory = mkdtempSync(join(tmpdir(), 'latch-sdk-'));
    mkdirSync(join(directory, 'run'), { mode: 0o700 });
    const path = join(directory, 'run', 'daemon.sock');
    const answer = `${JSON.stringify({ answer: { decision: 'allow', reason: 'test', via: 'policy' } })}\n`;
    const server = createServer((socket) => socket.once('data', () => socket.end(`${answer}${answer}`)));
    const previous = process.umask(0o177);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    process.umask(previous);
    const fn = counted('once');
    expect(await (await connect({ socketPath: path })).guard({ tool: 'anything' }, fn)).toEqual({
      ok: true,
      value: 'once',
    });
    expect(fn.runs).toBe(1);
    server.close();
  });
});
