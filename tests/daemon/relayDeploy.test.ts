import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import webpush from 'web-push';
import { afterAll, describe, expect, it } from 'vitest';
import { USAGE_EXIT } from '../../daemon/cli/exitCodes.ts';
import { deployedOrigin } from '../../daemon/deploy/deployedOrigin.ts';
import type { RelaySecrets } from '../../daemon/deploy/relaySecrets.ts';
import { generateVapidKeys } from '../../daemon/deploy/vapidKeys.ts';
import { vapidSubjectProblem } from '../../daemon/deploy/vapidSubjectProblem.ts';
import { wranglerCommand } from '../../daemon/deploy/wranglerCommand.ts';
import { initMachine, newMachine, runLatch } from '../support/latchMachine.ts';
import { verifyVapidHeader } from '../support/vapid.ts';
import { LATCH_PACKAGE } from '../support/latchCli.ts';

/**
 * `latch relay deploy` around wrangler: what it hands wrangler, what it keeps, what it prints.
 * A stand-in wrangler records its arguments and answers as a deploy would; the real wrangler's
 * dry run is driven from the installed package in tests/e2e/package.test.ts.
 */

const ORIGIN = 'https://latch-relay.someone.workers.dev';

/** A stand-in wrangler: records argv and what it could read, then exits with `code`. */
function fakeWrangler(
  folder: string,
  code = 0,
): { path: string; calls: () => { argv: string[]; secrets?: string }[] } {
  const log = join(folder, 'calls.jsonl');
  const path = join(folder, 'wrangler');
  writeFileSync(
    path,
    `#!/usr/bin/env node
const fs = require('node:fs');
const argv = process.argv.slice(2);
const at = argv.indexOf('--secrets-file');
const secrets = at >= 0 ? fs.readFileSync(argv[at + 1], 'utf8') : undefined;
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv, secrets }) + '\\n');
if (process.env.WRANGLER_OUTPUT_FILE_PATH && !argv.includes('--dry-run'))
  fs.appendFileSync(process.env.WRANGLER_OUTPUT_FILE_PATH, JSON.stringify({ type: 'deploy', version: 1, targets: [${JSON.stringify(ORIGIN)}] }) + '\\n');
process.exit(${code});
`,
    { mode: 0o755 },
  );
  return {
    path,
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as { argv: string[]; secrets?: string })
        : [],
  };
}

const made: string[] = [];
afterAll(() => {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
});

function setUp(code = 0) {
  const machine = newMachine();
  const folder = mkdtempSync(join(tmpdir(), 'latch-wrangler-'));
  made.push(dirname(machine.home), folder);
  const wrangler = fakeWrangler(folder, code);
  const deploy = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runLatch(machine, ['relay', 'deploy', ...args], { env: { LATCH_WRANGLER: wrangler.path, ...env } });
  const secretsPath = join(machine.home, 'relay', 'relay-secrets.json');
  const secrets = () => JSON.parse(readFileSync(secretsPath, 'utf8')) as RelaySecrets;
  return { machine, wrangler, deploy, secretsPath, secrets };
}

describe('latch relay deploy', () => {
  it('makes VAPID keys once, keeps them 0600, and hands wrangler the file, never a key', async () => {
    const { machine, wrangler, deploy, secretsPath, secrets } = setUp();
    const ran = await deploy(['--subject', 'mailto:ops@latch.dev']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(statSync(secretsPath).mode & 0o777).toBe(0o600);
    expect(statSync(join(machine.home, 'relay')).mode & 0o777).toBe(0o700);
    const kept = secrets();
    expect(kept.VAPID_SUBJECT).toBe('mailto:ops@latch.dev');

    const [call] = wrangler.calls();
    expect(call!.argv).toEqual([
      'deploy',
      '--config',
      join(machine.home, 'relay', 'wrangler.json'),
      '--secrets-file',
      secretsPath,
    ]);
    expect(JSON.parse(call!.secrets!)).toEqual(kept);
    // Keys go nowhere else: not on wrangler's command line, not on the terminal.
    for (const text of [call!.argv.join(' '), ran.stdout, ran.stderr]) {
      expect(text).not.toContain(kept.VAPID_PRIVATE_KEY);
      expect(text).not.toContain(kept.VAPID_PUBLIC_KEY);
    }
    expect(ran.stdout).toContain(`Deployed latch-relay at ${ORIGIN}\n`);
    expect(ran.stdout).toContain(`latch init --relay ${ORIGIN}`);
  });

  it('keeps the same keys on the next deploy, so subscribed phones keep getting pushes', async () => {
    const { deploy, secrets } = setUp();
    expect((await deploy(['--subject', 'mailto:ops@latch.dev'])).code).toBe(0);
    const first = secrets();
    expect((await deploy([])).code).toBe(0);
    expect(secrets()).toEqual(first);
    expect((await deploy(['--subject', 'https://latch.dev/contact'])).code).toBe(0);
    expect(secrets()).toEqual({ ...first, VAPID_SUBJECT: 'https://latch.dev/contact' });
  });

  it('tightens a secrets file others could read, and says so', async () => {
    const { deploy, secretsPath } = setUp();
    expect((await deploy(['--subject', 'mailto:ops@latch.dev'])).code).toBe(0);
    chmodSync(secretsPath, 0o644);
    const ran = await deploy([]);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toContain(`tightened ${secretsPath} from 0644 to 0600`);
    expect(statSync(secretsPath).mode & 0o777).toBe(0o600);
  });

  it('reads no keys through a link, and writes its folder and wrangler.json as the user’s alone (review sa)', async () => {
    const { machine, wrangler, deploy, secretsPath } = setUp();
    expect((await deploy(['--subject', 'mailto:ops@latch.dev'])).code).toBe(0);
    const relayFolder = join(machine.home, 'relay');
    const othersKeys = join(dirname(machine.home), 'others-keys.json');
    writeFileSync(othersKeys, readFileSync(secretsPath), { mode: 0o644 });
    rmSync(secretsPath);
    symlinkSync(othersKeys, secretsPath);
    const throughLink = await deploy([]);
    expect(throughLink.code).toBe(1);
    expect(throughLink.stderr).toContain(`${secretsPath} is a link`);
    expect(wrangler.calls()).toHaveLength(1);

    rmSync(secretsPath);
    chmodSync(relayFolder, 0o777);
    // A link in wrangler.json's place is replaced, not written through.
    const elsewhere = join(dirname(machine.home), 'elsewhere.json');
    writeFileSync(elsewhere, 'the user’s own\n');
    rmSync(join(relayFolder, 'wrangler.json'));
    symlinkSync(elsewhere, join(relayFolder, 'wrangler.json'));
    const ran = await deploy(['--subject', 'mailto:ops@latch.dev'], {});
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`tightened ${relayFolder} from 0777 to 0700`);
    expect(statSync(relayFolder).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(relayFolder, 'wrangler.json')).isFile()).toBe(true);
    expect(statSync(join(relayFolder, 'wrangler.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(elsewhere, 'utf8')).toBe('the user’s own\n');
  });

  it.each([
    ['no --subject on the first deploy', [], /the first deploy needs --subject/],
    ['a placeholder subject', ['--subject', 'mailto:admin@example.com'], /example\.com is a placeholder/],
    ['a subject that is no contact', ['--subject', 'ops@latch.dev'], /mailto: or an https: URL/],
    ['a Worker name Cloudflare refuses', ['--name', 'Latch_Relay'], /--name is a Worker name/],
  ])('refuses %s as a usage error, before anything is written or run', async (_what, args, message) => {
    const { machine, wrangler, deploy } = setUp();
    const ran = await deploy(args);
    expect(ran.code).toBe(USAGE_EXIT);
    expect(ran.stderr).toMatch(message);
    expect(existsSync(join(machine.home, 'relay'))).toBe(false);
    expect(wrangler.calls()).toEqual([]);
  });

  it('exits 1 when wrangler fails, or cannot be run', async () => {
    const failing = setUp(1);
    const ran = await failing.deploy(['--subject', 'mailto:ops@latch.dev']);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('latch: wrangler deploy failed (exit code 1)');
    expect(ran.stdout).not.toContain('Deployed');

    const missing = await failing.deploy(['--wrangler', '/nonexistent/wrangler']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('latch: cannot run /nonexistent/wrangler');
  });

  it('runs a dry run without keys or a subject, and names the bundle', async () => {
    const { machine, wrangler, deploy, secretsPath } = setUp();
    const ran = await deploy(['--dry-run', '--name', 'my-relay']);
    expect(ran.code, ran.stderr).toBe(0);
    const outdir = join(machine.home, 'relay', 'dry-run');
    expect(wrangler.calls()[0]!.argv).toEqual([
      'deploy',
      '--config',
      join(machine.home, 'relay', 'wrangler.json'),
      '--dry-run',
      '--outdir',
      outdir,
    ]);
    expect(ran.stdout).toContain(
      `nothing was deployed. The Worker wrangler would upload is ${outdir}/index.js`,
    );
    expect(existsSync(secretsPath)).toBe(false);
    const config = JSON.parse(readFileSync(join(machine.home, 'relay', 'wrangler.json'), 'utf8')) as {
      name: string;
      main: string;
    };
    expect(config.name).toBe('my-relay');
    expect(config.main).toBe(join(LATCH_PACKAGE, 'dist/relay/index.js'));
  });

  it('says how to point a host at the new relay, or that this one already is', async () => {
    const fresh = setUp();
    await initMachine(fresh.machine, { relay: ORIGIN });
    const ran = await fresh.deploy(['--subject', 'mailto:ops@latch.dev']);
    expect(ran.stdout).toContain('This computer already uses it.');

    const elsewhere = setUp();
    await initMachine(elsewhere.machine, { relay: 'http://localhost:8787' });
    const moved = await elsewhere.deploy(['--subject', 'mailto:ops@latch.dev']);
    expect(moved.stdout).toContain(`This computer uses http://localhost:8787`);
    expect(moved.stdout).toContain(`latch init --relay ${ORIGIN}`);
  });
});

describe('the pieces of a deploy', () => {
  it('makes VAPID keys that web-push signs with and a push service accepts', async () => {
    const keys = generateVapidKeys();
    expect(Buffer.from(keys.publicKey, 'base64url')).toHaveLength(65);
    expect(Buffer.from(keys.privateKey, 'base64url')).toHaveLength(32);
    // Signed as the relay signs (relay/push/sendWebPush.ts), checked as a push service checks.
    const { Authorization: header } = webpush.getVapidHeaders(
      'https://web.push.apple.com',
      'mailto:ops@latch.dev',
      keys.publicKey,
      keys.privateKey,
      'aes128gcm',
    );
    expect(await verifyVapidHeader(header)).toMatchObject({ ok: true, key: keys.publicKey });
  });

  it.each([
    ['mailto:ops@latch.dev', undefined],
    ['https://latch.dev/contact', undefined],
    ['mailto:admin@example.com', /placeholder/],
    ['https://relay.example/', /placeholder/],
    ['mailto:me@localhost', /placeholder/],
    ['mailto:nobody', /mailto:you@your.domain/],
    ['http://latch.dev', /mailto: or an https: URL/],
  ])('judges the VAPID subject %s', (subject, problem) => {
    const found = vapidSubjectProblem(subject);
    if (problem) expect(found).toMatch(problem);
    else expect(found).toBeUndefined();
  });

  it('reads the deployed origin from the lines wrangler writes', () => {
    const lines = [
      '{"type":"wrangler-session","version":1}',
      'not json',
      '{"type":"deploy","version":1,"targets":["schedule: */5 * * * *","latch.example.org/* (zone name: example.org)"]}',
    ].join('\n');
    expect(deployedOrigin(lines)).toBe('https://latch.example.org');
    expect(deployedOrigin('{"type":"deploy","targets":["https://latch-relay.a.workers.dev"]}')).toBe(
      'https://latch-relay.a.workers.dev',
    );
    expect(deployedOrigin('{"type":"deploy","version":1,"targets":[]}')).toBeUndefined();
    expect(deployedOrigin('')).toBeUndefined();
  });

  it('runs the wrangler asked for, else the pinned one through npx', () => {
    expect(wranglerCommand('/opt/wrangler', { LATCH_WRANGLER: '/x' }, '4.86.0')?.file).toBe('/opt/wrangler');
    expect(wranglerCommand(undefined, { LATCH_WRANGLER: '/x' }, '4.86.0')?.file).toBe('/x');
    expect(wranglerCommand(undefined, {}, '4.86.0')).toEqual({
      file: 'npx',
      args: ['--yes', 'wrangler@4.86.0'],
      shown: 'npx --yes wrangler@4.86.0',
    });
    expect(wranglerCommand(undefined, {}, undefined)).toBeUndefined();
  });
});
