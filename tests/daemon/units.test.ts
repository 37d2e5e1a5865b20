import { chmodSync, chownSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../daemon/config/config.ts';
import { configTemplate } from '../../daemon/config/configTemplate.ts';
import { base32, matchTotp, newTotpSecret, totpCode } from '../../daemon/fallback/totp.ts';
import { localChallenge } from '../../daemon/fallback/localChallenge.ts';
import { readGateRequest } from '../../daemon/socket/localApi.ts';
import { checkSocketPath, InsecurePathError, NoSocketError } from '../../daemon/socket/securePath.ts';

describe('TOTP (RFC 6238, SHA-1)', () => {
  // RFC 6238 Appendix B: the ASCII secret "12345678901234567890", 8 digits there; we keep 6.
  const secret = new TextEncoder().encode('12345678901234567890');
  it.each([
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
  ])('gives the RFC code at %i s', (seconds, code) => {
    expect(totpCode(secret, Math.floor(seconds / 30))).toBe(code);
  });

  it('accepts a code one step either side and no further', () => {
    const now = 1234567890_000;
    const step = Math.floor(now / 30_000);
    expect(matchTotp(secret, totpCode(secret, step - 1), now)).toBe(step - 1);
    expect(matchTotp(secret, totpCode(secret, step + 1), now)).toBe(step + 1);
    expect(matchTotp(secret, totpCode(secret, step + 2), now)).toBeUndefined();
    expect(matchTotp(secret, '12345', now)).toBeUndefined();
  });

  it('makes a new 160-bit secret each time (RFC 4226)', () => {
    const secret = newTotpSecret();
    expect(secret).toHaveLength(20);
    expect(secret).not.toEqual(newTotpSecret());
  });

  // RFC 4648 section 10, without the padding authenticator apps do not want.
  it.each([
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ])('encodes %j in RFC 4648 base32 as %s', (text, encoded) => {
    expect(base32(new TextEncoder().encode(text))).toBe(encoded);
  });
});

describe('the local challenge', () => {
  it.each(['low', 'medium'] as const)('asks a sum at %s risk, whose answer is the sum', (risk) => {
    const challenge = localChallenge(risk, 'x', 0);
    const [, a, b] = /what is (\d+) \+ (\d+)\?/.exec(challenge.prompt)!;
    expect(challenge.answer).toBe(String(Number(a) + Number(b)));
  });

  it('asks a sum for low risk and makes a person wait, then type the target, for high and critical', () => {
    expect(localChallenge('low', 'x', 0)).toMatchObject({
      notBefore: 0,
      prompt: expect.stringMatching(/what is \d+ \+ \d+/),
    });
    expect(localChallenge('high', 'main', 1000)).toEqual({
      prompt: expect.stringContaining('"main"'),
      answer: 'main',
      notBefore: 11_000,
      reviewMs: 10_000,
    });
    expect(localChallenge('critical', 'prod-db', 0).notBefore).toBe(30_000);
  });
});

describe('the socket path walk', () => {
  async function socketIn(directory: string): Promise<{ path: string; close(): void }> {
    const path = join(directory, 'daemon.sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path, resolve));
    // chmod, not umask: a worker thread (Stryker's runner, npm run mutate) cannot set the umask.
    chmodSync(path, 0o600);
    return { path, close: () => server.close() };
  }

  it('accepts a private path, even under a sticky /tmp', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    const socket = await socketIn(directory);
    expect(() => checkSocketPath(socket.path)).not.toThrow();
    socket.close();
  });

  it.each([
    ['a group-writable directory', 0o770, /writable by group or others/],
    ['a world-writable directory without the sticky bit', 0o777, /writable by group or others/],
  ])('refuses %s', async (_what, mode, message) => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    const socket = await socketIn(directory);
    chmodSync(directory, mode);
    expect(() => checkSocketPath(socket.path)).toThrow(message);
    socket.close();
  });

  it('tells a missing socket (no daemon) from an unsafe one, by its class', () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    expect(() => checkSocketPath(join(directory, 'nothing', 'daemon.sock'))).toThrow(NoSocketError);
    expect(() => checkSocketPath(join(directory, 'nothing', 'daemon.sock'))).not.toThrow(InsecurePathError);
    expect(() => checkSocketPath(join(directory, 'nothing', 'daemon.sock'))).toThrow(
      expect.objectContaining({ code: 'no_socket', message: `${join(directory, 'nothing')} does not exist` }),
    );
  });

  it('refuses a symbolic link anywhere on the way', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    mkdirSync(join(directory, 'real'), { mode: 0o700 });
    const socket = await socketIn(join(directory, 'real'));
    symlinkSync(join(directory, 'real'), join(directory, 'link'));
    expect(() => checkSocketPath(join(directory, 'link', 'daemon.sock'))).toThrow(
      expect.objectContaining({
        code: 'insecure_socket_path',
        message: `${join(directory, 'link')} is a symbolic link`,
      }),
    );
    socket.close();
  });

  // Handing a file to another user needs root, which is how the suite runs in CI; as root every
  // directory is root's, which the walk accepts, so each case makes its stranger by hand.
  const asRoot = process.getuid?.() === 0;
  const stranger = 4242;

  it.runIf(asRoot)('refuses a directory on the way owned by another user', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    const socket = await socketIn(directory);
    chownSync(directory, stranger, stranger);
    expect(() => checkSocketPath(socket.path)).toThrow(
      expect.objectContaining({
        code: 'insecure_socket_path',
        message: `${directory} is owned by another user (uid ${stranger})`,
      }),
    );
    socket.close();
  });

  it.runIf(asRoot)('refuses a socket that is not the client’s own, even in root’s directories', async () => {
    const socket = await socketIn(mkdtempSync(join(tmpdir(), 'latch-walk-')));
    expect(() => checkSocketPath(socket.path, stranger)).toThrow(
      expect.objectContaining({
        code: 'insecure_socket_path',
        message: `${socket.path} is not owned by you`,
      }),
    );
    socket.close();
  });

  it.runIf(asRoot)('accepts a path that is the client’s own when the client is not root', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    const socket = await socketIn(directory);
    chownSync(directory, stranger, stranger);
    chownSync(socket.path, stranger, stranger);
    expect(() => checkSocketPath(socket.path, stranger)).not.toThrow();
    socket.close();
  });

  it.runIf(asRoot)('refuses a sticky world-writable directory that is not root’s', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    const socket = await socketIn(directory);
    chownSync(directory, stranger, stranger);
    chownSync(socket.path, stranger, stranger);
    chmodSync(directory, 0o1777);
    expect(() => checkSocketPath(socket.path, stranger)).toThrow(
      expect.objectContaining({
        code: 'insecure_socket_path',
        message: `${directory} is writable by group or others (mode 1777)`,
      }),
    );
    socket.close();
  });

  it('refuses a socket that others can read', async () => {
    const socket = await socketIn(mkdtempSync(join(tmpdir(), 'latch-walk-')));
    chmodSync(socket.path, 0o640);
    expect(() => checkSocketPath(socket.path)).toThrow(
      expect.objectContaining({
        code: 'insecure_socket_path',
        message: `${socket.path} is readable or writable by others (mode 640)`,
      }),
    );
    socket.close();
  });

  it('refuses a regular file in place of the socket', () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    const path = join(directory, 'daemon.sock');
    writeFileSync(path, '', { mode: 0o600 });
    expect(() => checkSocketPath(path)).toThrow(/not a socket/);
  });
});

describe('the config file', () => {
  const write = (text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'latch-config-')), 'config.toml');
    writeFileSync(path, text);
    return path;
  };
  const valid = configTemplate({
    relayUrl: 'https://latch.example.com',
    hostName: 'box',
    fleet: 'fleet-1',
    quorum: 2,
  });

  it('reads the template latch init writes', () => {
    expect(loadConfig(write(valid))).toMatchObject({
      relay: { url: 'https://latch.example.com' },
      host: { fleet: 'fleet-1' },
      killSwitch: { quorum: 2, strict: false, onFreeze: 'stop' },
    });
  });

  it.each([
    ['a missing file', undefined, 'config_missing'],
    ['TOML that does not parse', 'relay = ', 'config_invalid'],
    [
      'a plain-http relay that is not local',
      valid.replace('https://latch.example.com', 'http://latch.example.com'),
      'config_invalid',
    ],
    ['a quorum of 0', valid.replace('quorum = 2', 'quorum = 0'), 'config_invalid'],
    ['an unknown fallback', valid.replace('mode = "none"', 'mode = "sms"'), 'config_invalid'],
    ['a fleet that is not an id', valid.replace('fleet = "fleet-1"', 'fleet = "a b"'), 'config_invalid'],
  ])('refuses %s with %s', (_what, text, code) => {
    const path = text === undefined ? join(tmpdir(), 'no-such-latch-config.toml') : write(text);
    expect(() => loadConfig(path)).toThrow(expect.objectContaining({ code }));
    expect(() => loadConfig(path)).toThrow(ConfigError);
  });

  it.each([
    ['a misspelt key', valid.replace('quorum = 2', 'quroum = 2'), 'quroum = 2', 'kill_switch.quroum'],
    ['an unknown table', `${valid}\n[kill_swich]\nquorum = 1\n`, '[kill_swich]', 'kill_swich'],
    ['an unknown top-level key', `relay_url = "x"\n${valid}`, 'relay_url = "x"', 'relay_url'],
  ])('refuses %s as config_invalid, naming the setting and its line', (_what, text, marker, setting) => {
    const path = write(text);
    const line = text.split('\n').indexOf(marker) + 1;
    expect(line).toBeGreaterThan(0);
    expect(() => loadConfig(path)).toThrow(
      expect.objectContaining({
        code: 'config_invalid',
        message: `${path} line ${line}: unknown setting "${setting}"`,
      }),
    );
  });

  it('redacts audit content when LATCH_AUDIT_CONTENT=none', () => {
    expect(loadConfig(write(valid), { LATCH_AUDIT_CONTENT: 'none' }).audit.content).toBe('none');
  });
});

describe('reading an agent’s gate request', () => {
  it('cleans every string shown and caps its size', () => {
    const read = readGateRequest({
      tool: 'Bash',
      title: `r\u200bm${'x'.repeat(300)}`,
      session: 's',
    });
    if ('error' in read) throw new Error(read.error);
    expect(read.title!.startsWith('rmxxx')).toBe(true);
    expect(read.title!.endsWith('…')).toBe(true);
    expect(read.shortened).toBe(true);
  });

  it('refuses a member of the wrong type by name, rather than judge the call without it', () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ paths: '/home/u/.latch/totp.json' }, 'paths must be a list of strings'],
      [{ paths: ['/a', 7] }, 'paths must be a list of strings'],
      [{ risk: 'extreme' }, 'risk must be one of low, medium, high, critical'],
      [{ risk: 3 }, 'risk must be one of low, medium, high, critical'],
      [{ command: ['rm', '-rf', '/'] }, 'command must be a string'],
      [{ cwd: 1 }, 'cwd must be a string'],
      [{ session: { id: 's' } }, 'session must be a string'],
      [{ toolUseId: 12 }, 'toolUseId must be a string'],
      [{ unsandboxed: 'true' }, 'unsandboxed must be true or false'],
      [{ interactive: 1 }, 'interactive must be true or false'],
      [{ timeoutSeconds: '30' }, 'timeoutSeconds must be a whole number of seconds above 0'],
      [{ timeoutSeconds: 1.5 }, 'timeoutSeconds must be a whole number of seconds above 0'],
      [{ timeoutSeconds: 0 }, 'timeoutSeconds must be a whole number of seconds above 0'],
    ];
    for (const [member, error] of refusals)
      expect(readGateRequest({ tool: 'Bash', command: 'ls', ...member })).toEqual({ error });
    // Absent, or null (as many languages write absent), is no fault.
    const read = readGateRequest({ tool: 'Bash', command: 'ls', risk: null, paths: null, session: null });
    expect(read).toMatchObject({ tool: 'Bash', command: 'ls', paths: [] });
    expect(read).not.toHaveProperty('risk');
    expect(read).not.toHaveProperty('session');
  });

  it('keeps what the guards judge as sent, and refuses it past its cap rather than cut it', () => {
    // Cut at 1,024 bytes, `/./././…/.latch/totp.json` named a folder, not the secret Read opens.
    const paths = [`/${'./'.repeat(600)}home/u/.latch/totp.json`, '/tmp/a\u200bb'];
    const input = JSON.stringify({
      a: 'x'.repeat(10_000),
      path: '/home/u/.latch/totp.json',
      b: 'y'.repeat(10_000),
    });
    const read = readGateRequest({ tool: 'mcp__fs__read', paths, cwd: '/tmp/\u202e', input });
    if ('error' in read) throw new Error(read.error);
    expect(read).toMatchObject({ paths, cwd: '/tmp/\u202e', input, shortened: false });

    expect(readGateRequest({ tool: 'Bash\u202e' })).toEqual({
      error: 'tool must be a name of at most 128 bytes, without control or invisible characters',
    });
    expect(readGateRequest({ tool: 'x'.repeat(129) })).toHaveProperty('error');
    expect(readGateRequest({ tool: 'Read', paths: Array(33).fill('/a') })).toEqual({
      error: 'a request names at most 32 paths',
    });
    const tooLong = { error: 'a path is at most 4096 bytes (PATH_MAX): a longer one cannot be opened' };
    expect(readGateRequest({ tool: 'Read', paths: [`/${'a'.repeat(4096)}`] })).toEqual(tooLong);
    expect(readGateRequest({ tool: 'Read', cwd: `/${'a'.repeat(4096)}` })).toEqual(tooLong);
    expect(readGateRequest({ tool: 'Read', paths: [`/${'a'.repeat(4095)}`] })).not.toHaveProperty('error');
  });

  it('keeps the command exactly as sent and whole, for the policy to judge what runs', () => {
    // Cut at 8000 bytes, a second command past the cut was never seen by the policy; cleaned,
    // the policy judged a different string from the one that runs.
    const command = `ls ${'x'.repeat(10_000)}\nr\u200bm -rf /srv/important\u0000`;
    const read = readGateRequest({ tool: 'Bash', command });
    if ('error' in read) throw new Error(read.error);
    expect(read.command).toBe(command);
    expect(read.shortened).toBe(false);
  });

  it('cuts a diff, keeping the start and the end of a long one, uncleaned (the card writes out what is hidden), and keeps an input whole', () => {
    const diff = `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-${'a'.repeat(70_000)}\n+b\u202e\n`;
    const read = readGateRequest({ tool: 'Write', diff, input: { content: `${'c'.repeat(20_000)}END` } });
    if ('error' in read) throw new Error(read.error);
    expect(read.diff!.startsWith('--- a/x\n+++ b/x\n')).toBe(true);
    expect(read.diff!).toMatch(/\n… [\d,]+ bytes not shown …\n/);
    expect(read.diff!.endsWith('\n+b\u202e\n')).toBe(true);
    // Whole; over 16 KiB, compact (toolInputText).
    expect(read.input).toBe(JSON.stringify({ content: `${'c'.repeat(20_000)}END` }));
    expect(read.shortened).toBe(true);
  });

  it('refuses a request without a tool, or with one that is not a string', () => {
    expect(readGateRequest({ command: 'ls' })).toEqual({ error: 'tool is required' });
    expect(readGateRequest('ls')).toEqual({ error: 'the request must be a JSON object' });
    expect(readGateRequest({ tool: 5 })).toEqual({ error: 'tool must be a string' });
  });

  it('refuses, never cuts or cleans, a session or tool call id: two calls would share one request and its approval', () => {
    const id = 'A'.repeat(256);
    for (const key of ['session', 'toolUseId'] as const) {
      const refused = { error: `${key} must be at most 256 bytes, without control or invisible characters` };
      expect(readGateRequest({ tool: 'Bash', [key]: `${id}-first` })).toEqual(refused);
      expect(readGateRequest({ tool: 'Bash', [key]: 'call-7\u200b' })).toEqual(refused);
      expect(readGateRequest({ tool: 'Bash', [key]: id })).toMatchObject({ [key]: id, shortened: false });
    }
  });

  it('refuses the names Latch asks its own changes under: a caller asking first would be joined by them', () => {
    const refused = { error: 'the agent name "latch" and tools "latch.…" are Latch\'s own' };
    expect(readGateRequest({ agent: 'latch', tool: 'latch.config' })).toEqual(refused);
    expect(readGateRequest({ agent: 'latch', tool: 'Bash', command: 'ls' })).toEqual(refused);
    expect(readGateRequest({ agent: 'claude-code', tool: 'latch.policy' })).toEqual(refused);
    expect(readGateRequest({ agent: 'latchkey', tool: 'latchkey.open' })).not.toHaveProperty('error');
  });
});
