import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { auditLines, runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { StandInRelay } from '../support/standInRelay.ts';
import { fleetOf } from '../support/killSwitchRelay.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { LATCH_BIN } from '../support/latchCli.ts';

const SERVER = ['node', '--import', 'tsx', new URL('../support/mcpTestServer.ts', import.meta.url).pathname];
const POLICY = `
default = "ask"
[[rule]]
tool = "mcp__notes__read_note"
action = "allow"
[[rule]]
tool = "mcp__notes__rename_*"
action = "deny"
[[rule]]
tool = ["mcp__notes__resources/read", "mcp__notes__prompts/get"]
action = "allow"
`;

let relay: StandInRelay;
let machine: LatchMachine;
let phone: TestPhone;
let paired: PairedDaemon;

beforeAll(async () => {
  paired = await startPairedDaemon({ policy: POLICY });
  ({ relay, machine } = paired);
  [phone] = paired.phones;
});

afterAll(() => paired.stop());

/** Speaks raw JSON-RPC lines to an MCP server over stdio, and reads raw lines back. */
class RawSession {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: string[] = [];
  stderr = '';
  #waiters: (() => void)[] = [];
  #nextId = 1;

  constructor(command: string[], env: NodeJS.ProcessEnv, cwd?: string) {
    this.child = spawn(command[0]!, command.slice(1), { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    // Made inside a test: closed when it ends, pass or fail, so no server outlives it.
    onTestFinished(() => this.close());
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.lines.push(line);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
  }

  /** Sends a request without waiting for its answer; returns its id. */
  send(method: string, params: unknown = {}): number {
    const id = this.#nextId++;
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return id;
  }

  /** Sends a request and returns the raw line that answers it. */
  async request(method: string, params: unknown = {}): Promise<string> {
    return this.answerTo(this.send(method, params));
  }

  /** Writes one line as given, valid JSON-RPC or not. */
  sendLine(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  async answerTo(id: number | null): Promise<string> {
    for (;;) {
      const found = this.lines.find((line) => (JSON.parse(line) as { id?: number | null }).id === id);
      if (found) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  notify(method: string, params?: unknown): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) })}\n`);
  }

  async start(): Promise<this> {
    await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'test', version: '1' },
    });
    this.notify('notifications/initialized');
    return this;
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

/** `latch mcp` in front of `server`, a command (the notes server by default), started raw. */
const gatedBy = (server: string[] = SERVER, options: { name?: string; cwd?: string } = {}) =>
  new RawSession(
    [process.execPath, LATCH_BIN, 'mcp', '--name', options.name ?? 'notes', '--', ...server],
    machine.env,
    options.cwd,
  );

const gatedSession = () => gatedBy().start();

/**
 * A server that takes any line, as Python's pydantic or Go's encoding/json would, and says on
 * its stderr what reached it.
 */
const ECHO_SERVER = [
  process.execPath,
  '-e',
  `require('readline').createInterface({ input: process.stdin }).on('line', (line) => process.stderr.write('server saw: ' + line + '\\n'))`,
];

const noteText = async (session: RawSession) =>
  result(await session.request('tools/call', { name: 'read_note', arguments: { id: '1' } })).content[0]!.text;

const result = (line: string) =>
  (JSON.parse(line) as { result: { content: { text: string }[]; isError?: boolean } }).result;

describe('latch mcp', () => {
  it('passes lists through byte-identical, and resources and prompts the policy allows', async () => {
    const direct = await new RawSession(SERVER, process.env).start();
    const gated = await gatedSession();
    for (const method of ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']) {
      expect(await gated.request(method)).toBe(await direct.request(method));
    }
    expect(await gated.request('resources/read', { uri: 'note://1' })).toBe(
      await direct.request('resources/read', { uri: 'note://1' }),
    );
    const summarize = { name: 'summarize', arguments: { id: '1' } };
    expect(await gated.request('prompts/get', summarize)).toBe(
      await direct.request('prompts/get', summarize),
    );
  });

  it('forwards an allowed call unchanged, and refuses one the policy denies with a tool error', async () => {
    const direct = await new RawSession(SERVER, process.env).start();
    const gated = await gatedSession();
    expect(await gated.request('tools/call', { name: 'read_note', arguments: { id: '1' } })).toBe(
      await direct.request('tools/call', { name: 'read_note', arguments: { id: '1' } }),
    );
    const before = relay.requests.length;
    expect(
      result(await gated.request('tools/call', { name: 'rename_note', arguments: { id: '1', to: 'x' } })),
    ).toEqual({
      content: [{ type: 'text', text: 'latch: policy_violation: denied by policy rule "rule 2"' }],
      isError: true,
    });
    expect(relay.requests.length).toBe(before);
  });

  it('holds a call for the phone: denied, the server never sees it; approved, it runs', async () => {
    const gated = await gatedSession();
    const before = relay.requests.length;
    const deleting = gated.request('tools/call', { name: 'delete_note', arguments: { id: '1' } });
    const first = await relay.nextRequest(before);
    await relay.sendDenial(phone, first);
    expect(result(await deleting)).toEqual({
      content: [{ type: 'text', text: expect.stringMatching(/^latch: denied/) }],
      isError: true,
    });
    expect(await noteText(gated)).toBe('buy milk');

    const again = gated.request('tools/call', {
      name: 'delete_note',
      arguments: { id: '1', why: 'x\u202eevil' },
    });
    const second = await relay.nextRequest(before + 1);
    const { token, details } = await phoneApproves(phone, second, relay.origin);
    // What the phone shows of the input writes out what would hide: the override, by its code.
    expect(details).toMatchObject({
      tool: 'mcp__notes__delete_note',
      agent: 'mcp',
    });
    // Headed by the server, the tool and its input on one line (review kd: the input is what runs).
    expect(details.title).toMatch(/^notes: delete_note \{.*"id": ?"1".*\}$/);
    expect(details.detail).toContain('"why": "x⟨U+202E⟩evil"');
    relay.sendApproval(second.requestId, token);
    expect(result(await again)).toEqual({ content: [{ type: 'text', text: 'deleted 1' }] });
    expect(await noteText(gated)).toBe('no such note');
  });

  it('drops a call the client cancelled while it waited, withdrawn from the phones, even if the phone approves it later', async () => {
    const gated = await gatedSession();
    const before = relay.requests.length;
    const id = gated.send('tools/call', { name: 'delete_note', arguments: { id: '1' } });
    const request = await relay.nextRequest(before);
    gated.notify('notifications/cancelled', { requestId: id, reason: 'timed out' });
    // Left on the phones, an approval would be audited as allowed though nothing ran.
    await expect.poll(() => relay.withdrawals).toContain(request.requestId);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'withdrawn', requestId: request.requestId }),
    );
    const { token } = await phoneApproves(phone, request, relay.origin);
    relay.sendApproval(request.requestId, token);
    await expect
      .poll(() => gated.stderr)
      .toContain(`dropped delete_note (call ${id}): the client cancelled it`);
    expect(await noteText(gated)).toBe('buy milk');
  });

  it('forwards of a call’s `_meta` only the progress token: the rest reaches the server’s handler, and no phone shows it', async () => {
    const gated = gatedBy(ECHO_SERVER);
    gated.send('tools/call', {
      name: 'read_note',
      arguments: { id: '1' },
      _meta: { progressToken: 'p1', 'acme/extra_args': ['--delete-all'] },
    });
    gated.send('resources/read', { uri: 'note://1', _meta: { 'acme/extra_args': ['--all'] } });
    await expect.poll(() => gated.stderr.match(/server saw: .*\n/g)?.length ?? 0).toBe(2);
    const seen = gated.stderr
      .match(/server saw: (.*)\n/g)!
      .map((line) => JSON.parse(line.slice(12)) as object);
    // Each is forwarded once the daemon allows it: in either order.
    expect(seen).toHaveLength(2);
    expect(seen).toEqual(
      expect.arrayContaining([
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'read_note', arguments: { id: '1' }, _meta: { progressToken: 'p1' } },
        },
        { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'note://1' } },
      ]),
    );
  });

  it('refuses, unforwarded, a tool named like a method and a method named like a tool: each would pass under the other’s rule', async () => {
    const gated = gatedBy(ECHO_SERVER);
    const asTool = gated.send('tools/call', { name: 'resources/read', arguments: { uri: 'note://1' } });
    const asMethod = gated.send('read_note', { id: '1' });
    const why =
      'latch mcp: a tool name with "/", or a method without one, would be judged as another: not forwarded';
    for (const id of [asTool, asMethod])
      expect(JSON.parse(await gated.answerTo(id))).toEqual({
        jsonrpc: '2.0',
        id,
        error: { code: -32600, message: why },
      });
    // The server is still reachable, and saw neither.
    gated.send('resources/read', { uri: 'note://1' });
    await expect.poll(() => gated.stderr).toContain('server saw:');
    expect(gated.stderr).not.toContain('read_note');
    expect(gated.stderr.match(/server saw: /g)).toHaveLength(1);
  });

  it('refuses, unforwarded, a tools/call it cannot read whole, which a lenient server would run', async () => {
    // Such a server ran delete_note from a call with one member too many, unasked, under a
    // policy that denies it.
    const gated = gatedBy(ECHO_SERVER);
    const call = (id: number | undefined, extra = '') =>
      `{"jsonrpc":"2.0",${id === undefined ? '' : `"id":${id},`}"method":"tools/call","params":{"name":"delete_note","arguments":{"id":"1"}}${extra}}`;
    const refused = (id: number | null, why: string) => ({
      jsonrpc: '2.0',
      id,
      error: { code: -32600, message: `latch mcp: ${why}` },
    });
    const invalid = 'not a valid JSON-RPC request for its method: not forwarded';
    const inexact =
      'a request with an integer beyond 2^53 is not forwarded: it would not reach the server as sent';
    gated.sendLine(call(1, ',"x":1'));
    gated.sendLine(call(2, ',"result":{}'));
    gated.sendLine(call(3).replace('"1"}', '"1","n":NaN}'));
    gated.sendLine(`[${call(4)}]`);
    gated.sendLine(call(undefined));
    // Go's encoding/json matches members without regard to case, the last one winning.
    gated.sendLine(call(5).replace('"method"', '"Method"'));
    gated.sendLine('{"jsonrpc":"2.0","id":6,"method":"ping","METHOD":"tools/call"}');
    gated.sendLine(`[[${call(7)}]]`);
    // JSON.parse rounds an integer past 2^53: what was judged is not what was sent.
    gated.sendLine(call(8).replace('"1"}', '"1","n":1234567890123456789}'));
    // Not only tool calls: a resource read is judged, so it must be read whole too.
    gated.sendLine('{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"note://1"},"x":1}');
    gated.sendLine('{"jsonrpc":"2.0","id":11,"Method":"ping"}');
    // Look-alikes that a decoder ignoring case, underscores or what follows a NUL takes for `method`.
    gated.sendLine('{"jsonrpc":"2.0","id":12,"method":"ping","me_thod":"tools/call"}');
    gated.sendLine('{"jsonrpc":"2.0","id":13,"method":"ping","method\\u0000":"tools/call"}');
    // Refused unjudged, and in batches: each request is answered under its own id.
    gated.sendLine('{"jsonrpc":"2.0","id":15,"method":"ping","params":{"n":1234567890123456789}}');
    gated.sendLine(`[${call(16)},{"jsonrpc":"2.0","method":"notifications/progress"},${call(17)}]`);
    expect(JSON.parse(await gated.answerTo(1))).toEqual(refused(1, invalid));
    expect(JSON.parse(await gated.answerTo(2))).toEqual(refused(2, invalid));
    expect(JSON.parse(await gated.answerTo(5))).toEqual(refused(5, invalid));
    expect(JSON.parse(await gated.answerTo(6))).toEqual(refused(6, invalid));
    expect(JSON.parse(await gated.answerTo(8))).toEqual(refused(8, inexact));
    expect(JSON.parse(await gated.answerTo(9))).toEqual(refused(9, invalid));
    expect(JSON.parse(await gated.answerTo(11))).toEqual(refused(11, invalid));
    expect(JSON.parse(await gated.answerTo(12))).toEqual(refused(12, invalid));
    expect(JSON.parse(await gated.answerTo(13))).toEqual(refused(13, invalid));
    expect(JSON.parse(await gated.answerTo(15))).toEqual(refused(15, inexact));
    const batch = 'a batch that asks the server to act is not forwarded: send each request alone';
    const batches = () => gated.lines.map((line) => JSON.parse(line) as unknown).filter(Array.isArray);
    await expect.poll(() => batches().length).toBe(2);
    expect(batches()).toEqual([[refused(4, batch)], [refused(16, batch), refused(17, batch)]]);
    const nulls = () => gated.lines.filter((line) => (JSON.parse(line) as { id?: unknown }).id === null);
    expect(nulls().map((line) => JSON.parse(line))).toEqual([
      refused(null, 'not JSON: not forwarded'),
      refused(null, invalid),
      refused(null, 'a batch inside a batch is not forwarded'),
    ]);
    // An allowed call goes on as it was judged: a `Name` beside `name` is not passed on.
    gated.sendLine(
      '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"1"},"Name":"delete_note"}}',
    );
    await expect
      .poll(() => gated.stderr)
      .toContain(
        'server saw: {"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"1"}}}',
      );
    // What is surely no tool call still passes, as it was read: `method` twice is one `ping`
    // (the last, as JSON.parse reads it), which a parser keeping the first would not have seen.
    gated.sendLine(
      '{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"purge"},"method":"ping"}',
    );
    await expect
      .poll(() => gated.stderr)
      .toContain('server saw: {"jsonrpc":"2.0","id":14,"method":"ping","params":{"name":"purge"}}');
    gated.notify('notifications/initialized');
    await expect
      .poll(() => gated.stderr)
      .toContain('server saw: {"jsonrpc":"2.0","method":"notifications/initialized"}');
    expect(gated.stderr.match(/tools\/call/g)).toHaveLength(1);
    expect(gated.stderr).not.toContain('delete_note');
    expect(gated.stderr).not.toMatch(/resources\/read|"id":1[123]/);
  });

  it('holds resource reads, prompts and methods it does not know for the phone, as it holds tool calls', async () => {
    // The server echoes what reaches it: what a phone refused never does.
    const gated = gatedBy(ECHO_SERVER, { name: 'files' });
    const refusedByPhone = { code: -32000, message: expect.stringMatching(/^latch: denied/) };
    const asked: [string, unknown, object][] = [
      ['resources/read', { uri: 'file:///srv/db/dump.sql' }, { uri: 'file:///srv/db/dump.sql' }],
      [
        'prompts/get',
        { name: 'deploy', arguments: { env: 'prod' } },
        { name: 'deploy', arguments: { env: 'prod' } },
      ],
      ['files/purge', { all: true }, { all: true }],
      // A request (it has an id) under a notification's name: only a notification passes unread.
      ['notifications/purge', { all: true }, { all: true }],
    ];
    for (const [method, params, shown] of asked) {
      const before = relay.requests.length;
      const answer = gated.request(method, params);
      const request = await relay.nextRequest(before);
      const { details } = await phoneApproves(phone, request, relay.origin);
      expect(details).toMatchObject({ tool: `mcp__files__${method}` });
      expect(details.title.startsWith(`files: ${method} `)).toBe(true);
      expect(JSON.parse(details.detail!)).toEqual(shown);
      await relay.sendDenial(phone, request);
      expect(JSON.parse(await answer)).toMatchObject({ error: refusedByPhone });
    }
    // Approved, a read goes on as it was judged.
    const before = relay.requests.length;
    const id = gated.send('resources/read', { uri: 'file:///srv/db/dump.sql' });
    const request = await relay.nextRequest(before);
    const { token } = await phoneApproves(phone, request, relay.origin);
    relay.sendApproval(request.requestId, token);
    await expect
      .poll(() => gated.stderr)
      .toContain(
        `server saw: {"jsonrpc":"2.0","id":${id},"method":"resources/read","params":{"uri":"file:///srv/db/dump.sql"}}`,
      );
    expect(gated.stderr.match(/server saw: .*"method"/g)).toHaveLength(1);
    // Latch's secret, read as a resource, is refused without asking anyone.
    const secret = `file://${machine.home}/%74otp.json`;
    const asking = relay.requests.length;
    expect(JSON.parse(await gated.request('resources/read', { uri: secret }))).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/^latch: .*its secrets/) },
    });
    expect(relay.requests.length).toBe(asking);
  });

  it('answers a message nested too deep to write out again, and goes on answering', async () => {
    const gated = await gatedSession();
    // Deep enough to overflow a reader that recurses, not JSON.parse.
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    gated.sendLine(
      `{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"1","x":${deep}}}}`,
    );
    // A request the gate lets by unjudged, rebuilt as it was read: too deep to write out again.
    gated.sendLine(`{"jsonrpc":"2.0","id":32,"method":"ping","params":{"x":${deep}},"extra":1}`);
    gated.sendLine(deep);
    expect(JSON.parse(await gated.answerTo(30))).toMatchObject({
      error: {
        code: -32600,
        message: 'latch mcp: the tool input is nested more than 64 levels deep: not forwarded',
      },
    });
    expect(JSON.parse(await gated.answerTo(32))).toMatchObject({
      error: { code: -32600, message: 'latch mcp: a message the gate could not read: not forwarded' },
    });
    expect(JSON.parse(await gated.answerTo(null))).toMatchObject({
      error: { code: -32600, message: 'latch mcp: a batch inside a batch is not forwarded' },
    });
    expect(await noteText(gated)).toBe('buy milk');
  });

  it('refuses, unforwarded, a call whose arguments nest more than 64 levels deep', async () => {
    const gated = await gatedSession();
    const nested = (depth: number): string => (depth === 0 ? '"1"' : `[${nested(depth - 1)}]`);
    gated.sendLine(
      `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"read_note","arguments":{"id":${nested(100)}}}}`,
    );
    expect(JSON.parse(await gated.answerTo(31))).toMatchObject({
      error: {
        code: -32600,
        message: 'latch mcp: the tool input is nested more than 64 levels deep: not forwarded',
      },
    });
    expect(await noteText(gated)).toBe('buy milk');
  });

  it('drops every waiting call of an id the client cancels, when it reuses ids', async () => {
    const gated = gatedBy(ECHO_SERVER);
    const before = relay.requests.length;
    const line =
      '{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"delete_note","arguments":{"id":"1"}}}';
    gated.sendLine(line);
    gated.sendLine(line);
    const first = await relay.nextRequest(before);
    const second = await relay.nextRequest(before + 1);
    gated.notify('notifications/cancelled', { requestId: 40 });
    for (const request of [first, second]) {
      const { token } = await phoneApproves(phone, request, relay.origin);
      relay.sendApproval(request.requestId, token);
    }
    await expect.poll(() => gated.stderr.match(/dropped delete_note \(call 40\)/g)?.length).toBe(2);
    // A cancel inside a batch counts as well.
    const third = relay.requests.length;
    gated.sendLine(line.replace('"id":40', '"id":41'));
    const cancelledInBatch = await relay.nextRequest(third);
    gated.sendLine('[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41}}]');
    await expect.poll(() => relay.withdrawals).toContain(cancelledInBatch.requestId);
    const { token } = await phoneApproves(phone, cancelledInBatch, relay.origin);
    relay.sendApproval(cancelledInBatch.requestId, token);
    await expect.poll(() => gated.stderr).toContain('dropped delete_note (call 41)');
    expect(gated.stderr).not.toContain('tools/call');
  });

  it('reads a relative path in a call from the folder the server runs in', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'latch-mcp-cwd-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    symlinkSync(join(machine.home, 'totp.json'), join(folder, 'notes.txt'));
    const gated = gatedBy(ECHO_SERVER, { cwd: folder });
    const asking = relay.requests.length;
    expect(
      result(await gated.request('tools/call', { name: 'read_note', arguments: { id: 'notes.txt' } })),
    ).toEqual({
      content: [{ type: 'text', text: expect.stringMatching(/^latch: .*its secrets/) }],
      isError: true,
    });
    expect(gated.stderr).not.toContain('server saw');
    expect(relay.requests.length).toBe(asking);
  });

  it('refuses a call, invalid_request, once the folder the server runs in was deleted', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'latch-mcp-gone-'));
    const [node, flag, echo] = ECHO_SERVER;
    const gated = gatedBy([node!, flag!, `process.stderr.write('ready\\n'); ${echo!}`], { cwd: folder });
    await expect.poll(() => gated.stderr).toContain('ready');
    rmSync(folder, { recursive: true });
    const asking = relay.requests.length;
    expect(result(await gated.request('tools/call', { name: 'read_note', arguments: { id: '1' } }))).toEqual({
      content: [
        {
          type: 'text',
          text: expect.stringContaining('invalid_request: the current folder no longer exists'),
        },
      ],
      isError: true,
    });
    expect(gated.stderr).not.toContain('server saw');
    expect(relay.requests.length).toBe(asking);
  });

  it.each([
    ['exits', `process.stderr.write('ready\\n'); process.stdin.once('data', () => process.exit(3))`, 3],
    [
      'closes its input and stays',
      `require('fs').closeSync(0); process.stderr.write('ready\\n'); setInterval(() => {}, 1000)`,
      143,
    ],
  ])(
    'ends with the server when it %s, rather than swallow what the client sends',
    async (_how, server, code) => {
      const gated = gatedBy([process.execPath, '-e', server]);
      const ended = new Promise<number | null>((resolve) => gated.child.once('exit', resolve));
      await expect.poll(() => gated.stderr).toContain('ready');
      gated.send('ping');
      gated.send('ping');
      expect(await ended).toBe(code);
    },
  );

  it('refuses at start, without starting the server, a name that cannot stand in mcp__<name>__<tool>', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'latch-mcp-name-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const started = join(folder, 'started');
    const server = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(started)}, '')`];
    // `a__b`'s tools would match a rule for server `a` (`mcp__a__*`).
    for (const name of ['a__b', '', 'two words', 'dir/name', 'bidi\u202eeman', 'x'.repeat(65)]) {
      const ran = await runLatch(machine, ['mcp', '--name', name, '--', ...server]);
      expect(ran.code, name).toBe(2);
      expect(ran.stderr).toMatch(
        /^latch mcp: the server's name cannot stand in mcp__<name>__<tool>: give one with --name/,
      );
      expect(ran.stderr).not.toContain(name || 'never');
    }
    expect(existsSync(started)).toBe(false);
    // A name the command gives is held to the same: `node my__server.js` is `my__server`.
    const named = join(folder, 'my__server.js');
    writeFileSync(named, `require('fs').writeFileSync(${JSON.stringify(started)}, '')`);
    expect((await runLatch(machine, ['mcp', '--', process.execPath, named])).code).toBe(2);
    expect(existsSync(started)).toBe(false);
  });

  it('refuses every call while frozen, with kill_switch', async () => {
    const gated = await gatedSession();
    const envelope = await signEnvelope(
      'freeze',
      { fleet: fleetOf(machine), reason: 'mcp test' },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    relay.send({ v: PROTOCOL_VERSION, type: 'frozen', epoch: 1, envelope, at: Date.now() });
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(1);
    expect(
      result(await gated.request('tools/call', { name: 'read_note', arguments: { id: '1' } })),
    ).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^latch: kill_switch: the fleet is frozen \(mcp test\)/) }],
    });
  });
});
