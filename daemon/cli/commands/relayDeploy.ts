import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/config.ts';
import { tightenToOwnerOnly } from '../../config/fileModes.ts';
import { latchFiles, latchHome } from '../../config/paths.ts';
import { writeOwnerOnlyFile } from '../../config/writeOwnerOnlyFile.ts';
import { deployedOrigin } from '../../deploy/deployedOrigin.ts';
import { readRelaySecrets, writeRelaySecrets, type RelaySecrets } from '../../deploy/relaySecrets.ts';
import { relayWranglerConfig } from '../../deploy/relayWranglerConfig.ts';
import { generateVapidKeys } from '../../deploy/vapidKeys.ts';
import { vapidSubjectProblem } from '../../deploy/vapidSubjectProblem.ts';
import { wranglerCommand, type WranglerCommand } from '../../deploy/wranglerCommand.ts';
import { fail } from '../home.ts';
import { latchPackage, PACKAGE_ROOT } from '../latchPackage.ts';

/** A Worker's name as Cloudflare takes it: lower-case letters, digits and dashes, 63 at most. */
const WORKER_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Runs wrangler with the terminal (it may log in, or ask once for a workers.dev subdomain). */
function runWrangler(
  wrangler: WranglerCommand,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(wrangler.file, [...wrangler.args, ...args], { cwd, env, stdio: 'inherit' });
    child.on('error', (error) => fail(`cannot run ${wrangler.shown}: ${error.message}`, 1));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Keeps the secrets the Worker deploys with: VAPID keys made once, the subject as last asked. */
function keepRelaySecrets(path: string, subject: string | undefined): void {
  let stored: RelaySecrets | undefined;
  try {
    stored = readRelaySecrets(path, (line) => process.stderr.write(`latch: ${line}\n`));
  } catch (error) {
    fail((error as Error).message, 1);
  }
  const contact = subject ?? stored?.VAPID_SUBJECT;
  if (!contact)
    fail(
      'the first deploy needs --subject mailto:you@your.domain (or an https: URL of yours): the push services’ way to reach you',
    );
  if (stored) {
    if (stored.VAPID_SUBJECT !== contact) writeRelaySecrets(path, { ...stored, VAPID_SUBJECT: contact });
    return;
  }
  const keys = generateVapidKeys();
  writeRelaySecrets(path, {
    VAPID_PUBLIC_KEY: keys.publicKey,
    VAPID_PRIVATE_KEY: keys.privateKey,
    VAPID_SUBJECT: contact,
  });
}

/** What to do next with the relay at `origin`, for this computer as it is set up (or not). */
function nextSteps(origin: string, configPath: string): string {
  const init = `latch init --relay ${origin}`;
  if (!existsSync(configPath))
    return `Next, on each computer: ${init}, then latch daemon and latch pair (docs/deploy.md).\n`;
  let current: string | undefined;
  try {
    current = loadConfig(configPath).relay.url;
  } catch {
    // A broken config is latch doctor's to report; the next step is the same.
  }
  if (current !== undefined && new URL(current).origin === origin)
    return `This computer already uses it. Phones open ${origin} to install the app and pair.\n`;
  return (
    `This computer uses ${current ?? 'another relay'} (${configPath}). Other computers: ${init}.\n` +
    'Moving this one means pairing its phones again (docs/deploy.md).\n'
  );
}

/**
 * `latch relay deploy`: your own relay and phone app on Cloudflare, from the package alone. The
 * Worker is the bundle the package ships (dist/relay), uploaded as it is, with the app's files;
 * its VAPID keys are made here once, kept 0600, and go up with it as Worker secrets
 * (`--secrets-file`: the secrets and the code that reads them arrive in one version). Keys are
 * never printed, and never on a command line.
 */
export async function run(options: {
  subject?: string;
  name?: string;
  wrangler?: string;
  dryRun?: boolean;
}): Promise<void> {
  if (options.name !== undefined && !WORKER_NAME.test(options.name))
    fail('--name is a Worker name: lower-case letters, digits and dashes, 63 at most');
  if (options.subject !== undefined) {
    const problem = vapidSubjectProblem(options.subject);
    if (problem) fail(`--subject: ${problem}`);
  }
  const root = fileURLToPath(PACKAGE_ROOT);
  const config = relayWranglerConfig(root, options.name);
  if (!config) fail(`the relay is not built in ${root}: run npm run build there`, 1);
  // The wrangler this package's relay is built and tested with (its devDependencies, published).
  const pinned = latchPackage().devDependencies?.['wrangler'];
  const wrangler = wranglerCommand(options.wrangler, process.env, pinned);
  if (!wrangler) fail('this package names no wrangler version: pass --wrangler <path>', 1);

  const files = latchFiles(latchHome());
  const folder = dirname(files.relayConfig);
  const output = join(folder, 'wrangler-output.ndjson');
  const outdir = join(folder, 'dry-run');
  const args = ['deploy', '--config', files.relayConfig];
  // A dry run uploads nothing, so it needs no keys: it makes none, and asks for no subject.
  if (options.dryRun) args.push('--dry-run', '--outdir', outdir);
  else {
    keepRelaySecrets(files.relaySecrets, options.subject);
    args.push('--secrets-file', files.relaySecrets);
  }
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // What wrangler deploys is read from this folder: no one else may put their Worker there.
  tightenToOwnerOnly({ files: [], folders: [folder] }, (line) => process.stdout.write(`${line}\n`));
  writeOwnerOnlyFile(files.relayConfig, `${JSON.stringify(config, null, 2)}\n`);
  rmSync(outdir, { recursive: true, force: true });
  rmSync(output, { force: true });
  process.stdout.write(`Running ${wrangler.shown} ${args.join(' ')}\n`);
  const code = await runWrangler(wrangler, args, folder, {
    ...process.env,
    WRANGLER_OUTPUT_FILE_PATH: output,
  });
  if (code !== 0) fail(`wrangler deploy failed (exit code ${code})`, 1);

  if (options.dryRun) {
    process.stdout.write(
      `Dry run: nothing was deployed. The Worker wrangler would upload is ${join(outdir, 'index.js')}, ` +
        `with the app's files from ${config.assets.directory}.\n`,
    );
    return;
  }
  const origin = existsSync(output) ? deployedOrigin(readFileSync(output, 'utf8')) : undefined;
  if (!origin) {
    process.stdout.write(
      `Deployed ${config.name}. Wrangler named no https address: use the Worker's custom domain (docs/deploy.md).\n`,
    );
    return;
  }
  process.stdout.write(`Deployed ${config.name} at ${origin}\n${nextSteps(origin, files.config)}`);
}
