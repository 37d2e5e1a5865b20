import { chmodSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configTemplate, loadConfig } from '../../daemon/config/config.ts';
import { base32, matchTotp, totpCode } from '../../daemon/fallback/totp.ts';
import { localChallenge } from '../../daemon/fallback/localChallenge.ts';
import { readGateRequest } from '../../daemon/socket/localApi.ts';
import { checkSocketPath, InsecurePathError, NoSocketError } from '../../daemon/socket/securePath.ts';
import { writeFileSync } from 'node:fs';

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

  it('encodes secrets in RFC 4648 base32', () => {
    expect(base32(new TextEncoder().encode('foobar'))).toBe('MZXW6YTBOI');
  });
});

describe('the local challenge', () => {
  it('asks a sum for low risk and makes a person wait, then type the target, for high and critical', () => {
    expect(localChallenge('low', 'x', 0)).toMatchObject({
      notBefore: 0,
      prompt: expect.stringMatching(/what is \d+ \+ \d+/),
    });
    expect(localChallenge('high', 'main', 1000)).toEqual({
      prompt: expect.stringContaining('"main"'),
      answer: 'main',
      notBefore: 11_000,
    });
    expect(localChallenge('critical', 'prod-db', 0).notBefore).toBe(30_000);
  });
});

describe('the socket path walk', () => {
  async function socketIn(directory: string): Promise<{ path: string; close(): void }> {
    const path = join(directory, 'daemon.sock');
    const server = createServer();
    const previous = process.umask(0o177);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    process.umask(previous);
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
  });

  it('refuses a symbolic link anywhere on the way', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    mkdirSync(join(directory, 'real'), { mode: 0o700 });
    const socket = await socketIn(join(directory, 'real'));
    symlinkSync(join(directory, 'real'), join(directory, 'link'));
    expect(() => checkSocketPath(join(directory, 'link', 'daemon.sock'))).toThrow(InsecurePathError);
    socket.close();
  });

  it('refuses a path owned by another user', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-walk-'));
    const socket = await socketIn(directory);
    expect(() => checkSocketPath(socket.path, 4242)).toThrow(/owned by another user|not owned by you/);
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
  it('cleans every string and caps every size, but the command', () => {
    const read = readGateRequest({
      tool: 'Bash\u202e',
      title: `r\u200bm${'x'.repeat(300)}`,
      paths: Array(100).fill('/a'),
      risk: 'extreme',
      session: 's',
    });
    expect(read).toMatchObject({ tool: 'Bash', paths: expect.any(Array), shortened: true });
    if ('error' in read) throw new Error(read.error);
    expect(read.title!.startsWith('rmxxx')).toBe(true);
    expect(read.title!.endsWith('…')).toBe(true);
    expect(read.paths).toHaveLength(32);
    expect(read.risk).toBeUndefined();
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

  it('cleans a diff and an input, keeping the start and the end of a long one', () => {
    const diff = `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-${'a'.repeat(70_000)}\n+b\u202e\n`;
    const read = readGateRequest({ tool: 'Write', diff, input: { content: `${'c'.repeat(20_000)}END` } });
    if ('error' in read) throw new Error(read.error);
    expect(read.diff!.startsWith('--- a/x\n+++ b/x\n')).toBe(true);
    expect(read.diff!).toMatch(/\n… [\d,]+ bytes not shown …\n/);
    expect(read.diff!.endsWith('\n+b\n')).toBe(true);
    expect(read.input!.endsWith('END"\n}')).toBe(true);
    expect(read.shortened).toBe(true);
  });

  it('refuses a request without a tool', () => {
    expect(readGateRequest({ command: 'ls' })).toEqual({ error: 'tool is required' });
    expect(readGateRequest('ls')).toEqual({ error: 'the request must be a JSON object' });
  });
});
