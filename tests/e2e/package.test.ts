import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorJson } from '../../daemon/cli/commands/doctor.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import {
  installLatch,
  packLatch,
  type InstalledLatch,
  type PackedLatch,
} from '../../scripts/packageInstall.ts';

/**
 * Latch as a user installs it: `npm install -g` of the packed tarball (better-sqlite3 built from
 * source, as on a machine without its prebuilt binary), then used from a folder that is not the
 * repository, in a home of its own: the CLI, the hooks, the relay's deploy, and the SDK's types.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies: Record<string, string>;
};
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');
const WRANGLER = join(ROOT, 'node_modules', '.bin', 'wrangler');

// The install builds a native addon: a few minutes on a busy machine.
const INSTALL_MS = 600_000;

let root: string;
let packed: PackedLatch;
let installed: InstalledLatch;
let env: NodeJS.ProcessEnv;
let cwd: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'latch-package-'));
  mkdirSync(join(root, 'pack'));
  packed = packLatch(join(root, 'pack'));
  installed = installLatch(packed.tarball, join(root, 'prefix'), { timeoutMs: INSTALL_MS });
  console.log(
    `packed ${packed.files.length} files, ${(packed.size / 1024).toFixed(0)} KB; npm install -g took ${installed.seconds.toFixed(1)} s`,
  );
  const user = join(root, 'user');
  const runtime = join(root, 'run');
  mkdirSync(user);
  mkdirSync(runtime, { mode: 0o700 });
  cwd = join(root, 'elsewhere');
  mkdirSync(cwd);
  env = {
    ...process.env,
    PATH: `${join(installed.prefix, 'bin')}:${process.env['PATH']}`,
    HOME: user,
    LATCH_HOME: join(user, '.latch'),
    XDG_RUNTIME_DIR: runtime,
    CLAUDE_CONFIG_DIR: undefined,
    CODEX_HOME: undefined,
    WRANGLER_SEND_METRICS: 'false',
  };
}, INSTALL_MS + 120_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** `latch …` by name, as a person types it: the one npm put on PATH. */
function latch(args: string[], timeoutMs = 60_000) {
  const ran = spawnSync('latch', args, { cwd, env, encoding: 'utf8', timeout: timeoutMs });
  return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

describe('the tarball', () => {
  it('holds what runs, and no tests, sources, source maps or node_modules', () => {
    for (const file of [
      'package.json',
      'README.md',
      'daemon/bin/latch.cjs',
      'dist/latch/main.mjs',
      'dist/latch/hook.cjs',
      'dist/sdk/latch.mjs',
      'dist/sdk/latch.d.ts',
      'dist/relay/index.js',
      'dist/relay/wrangler.json',
      'dist/pwa/index.html',
      'dist/pwa/sw.js',
    ])
      expect(packed.files).toContain(file);
    for (const file of packed.files) {
      expect(file).not.toMatch(/^(tests|relay|pwa|shared|scripts|bench|docs)\//);
      expect(file).not.toMatch(/^daemon\/(?!bin\/latch\.cjs$)/);
      expect(file).not.toMatch(/(^|\/)node_modules\//);
      expect(file).not.toMatch(/\.test\.ts$|(?<!\.d)\.ts$|\.map$/);
    }
  });

  it('depends at run time on better-sqlite3 alone, optional (for Node 20), and installs nothing else of the build', () => {
    const manifest = JSON.parse(
      readFileSync(join(installed.packageDir, 'package.json'), 'utf8'),
    ) as typeof PKG;
    expect(manifest.name).toBe('@latchhq/latch');
    expect(manifest.dependencies).toBeUndefined();
    expect(Object.keys(manifest.optionalDependencies)).toEqual(['better-sqlite3']);
    for (const bundled of ['hono', 'commander', 'ws', 'web-push', 'preact', 'wrangler'])
      expect(existsSync(join(installed.packageDir, 'node_modules', bundled)), bundled).toBe(false);
  });
});

describe('the installed latch', () => {
  it('prints the package’s version', () => {
    const ran = latch(['--version']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(`latch ${PKG.version} (protocol v${PROTOCOL_VERSION})\n`);
  });

  it('sets up, writes the Claude Code hook with its own absolute paths, and doctor says what is left', () => {
    // Port 9 (discard) refuses at once: a relay that is not there.
    const init = latch(['init', '--relay', 'http://localhost:9', '--name', 'package-test']);
    expect(init.code, init.stderr).toBe(0);

    const install = latch(['install', 'claude-code']);
    expect(install.code, install.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(env['HOME']!, '.claude', 'settings.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { command: string; timeout: number }[] }[]>;
    };
    const command = settings.hooks['PreToolUse']![0]!.hooks[0]!.command;
    expect(command).toContain(`${installed.packageDir}/daemon/bin/latch.cjs hook claude-code --timeout`);

    // The hook from the installed bundle answers, and fails closed: no daemon runs.
    const hook = spawnSync('sh', ['-c', command], {
      cwd,
      env,
      encoding: 'utf8',
      timeout: 30_000,
      input: JSON.stringify({
        session_id: 'package-test',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'rm -rf ./build' },
        tool_use_id: 'toolu_1',
        cwd,
      }),
    });
    // A deny is exit 2 with its reason on stderr (then the failsafe's line).
    expect(hook.status).toBe(2);
    expect(hook.stderr).toContain('daemon_unreachable');

    const doctor = latch(['doctor', '--json']);
    expect(doctor.code).toBe(1);
    const report = JSON.parse(doctor.stdout) as DoctorJson;
    const check = (name: string) => report.checks.find((each) => each.name === name);
    expect(report.ok).toBe(false);
    for (const passing of [
      'config',
      'state',
      'host key',
      'file modes',
      'policy',
      'Claude Code hooks',
      'Claude Code hook command',
      'Claude Code hook timeout',
    ])
      expect(check(passing), passing).toMatchObject({ ok: true });
    for (const failing of ['socket privacy', 'relay reachable', 'devices paired'])
      expect(check(failing), failing).toMatchObject({ ok: false, fix: expect.any(String) });
  });

  it('bundles the relay with the real wrangler on latch relay deploy --dry-run, from the package’s files', () => {
    const ran = latch(['relay', 'deploy', '--dry-run', '--wrangler', WRANGLER], 120_000);
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    const relay = join(env['LATCH_HOME']!, 'relay');
    expect(ran.stdout).toContain(`Dry run: nothing was deployed`);
    expect(statSync(join(relay, 'dry-run', 'index.js')).size).toBeGreaterThan(100_000);

    const config = JSON.parse(readFileSync(join(relay, 'wrangler.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({
      main: join(installed.packageDir, 'dist', 'relay', 'index.js'),
      no_bundle: true,
      assets: { directory: join(installed.packageDir, 'dist', 'pwa'), binding: 'ASSETS' },
    });
    // The same Durable Objects and every migration as the repository's wrangler.toml.
    const source = parse(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8'));
    for (const key of ['name', 'compatibility_date', 'compatibility_flags', 'durable_objects', 'migrations'])
      expect(config[key], key).toEqual(source[key]);
    // A dry run uploads nothing: it makes no keys.
    expect(existsSync(join(relay, 'relay-secrets.json'))).toBe(false);
  }, 180_000);
});

describe('the SDK in a TypeScript project of its own', () => {
  let project: string;
  beforeAll(() => {
    project = join(root, 'consumer');
    mkdirSync(join(project, 'node_modules', '@latchhq'), { recursive: true });
    // The installed package, as npm would place it in the project.
    symlinkSync(installed.packageDir, join(project, 'node_modules', '@latchhq', 'latch'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
        },
        include: ['index.ts'],
      }),
    );
  });

  const typeCheck = (source: string) => {
    writeFileSync(join(project, 'index.ts'), source);
    const ran = spawnSync(TSC, ['-p', project], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    return { code: ran.status, output: `${ran.stdout}${ran.stderr}` };
  };

  it('type-checks a real use of connect() and guard()', () => {
    const checked = typeCheck(`
import { connect, type GuardCall, type GuardResult } from '@latchhq/latch';

const latch = await connect({ agent: 'deployer' });
const call: GuardCall = { tool: 'deploy', input: { target: 'prod' }, risk: 'high', title: 'Deploy prod' };
const result: GuardResult<number> = await latch.guard(call, async () => 42);
if (result.ok) {
  const answer: number = result.value;
  console.log(answer);
} else {
  const why:
    | 'aborted'
    | 'denied'
    | 'expired'
    | 'kill_switch'
    | 'policy_violation'
    | 'relay_unreachable'
    | 'unavailable' = result.reason;
  console.log(why, result.code, result.message);
}
const deploy = latch.gated((target: string) => target.length, (target) => ({ tool: 'deploy', target }));
const gated: GuardResult<number> = await deploy('prod');
console.log(gated);
`);
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);
  });

  it('refuses a wrong use: the types are real, not any', () => {
    const checked = typeCheck(`
import { connect } from '@latchhq/latch';

const latch = await connect();
await latch.guard({ tool: 42 }, () => 1);
await latch.guard({ tool: 'deploy', risk: 'extreme' }, () => 1);
const result = await latch.guard({ tool: 'deploy' }, () => 1);
if (result.ok) {
  const text: string = result.value;
  console.log(text);
}
`);
    expect(checked.code).not.toBe(0);
    expect(checked.output).toMatch(
      /index\.ts\(5,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
    expect(checked.output).toMatch(/index\.ts\(6,\d+\): error TS2322: Type '"extreme"' is not assignable/);
    expect(checked.output).toMatch(
      /index\.ts\(9,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
  });

  it('runs: the guard answers unavailable, and runs nothing, while no daemon runs', () => {
    const ran = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { connect } from '@latchhq/latch';
let ran = false;
const result = await (await connect()).guard({ tool: 'deploy' }, () => { ran = true; });
console.log(JSON.stringify({ ran, ok: result.ok, reason: result.reason }));`,
      ],
      { cwd: project, env, encoding: 'utf8', timeout: 30_000 },
    );
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toEqual({ ran: false, ok: false, reason: 'unavailable' });
  });
});
