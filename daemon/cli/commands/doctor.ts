import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { loadConfig, type LatchConfig } from '../../config/config.ts';
import { loadHostIdentity } from '../../identity/hostIdentity.ts';
import { ownerOnlyPlaces } from '../../config/fileModes.ts';
import { latchFiles, latchHome, socketPath } from '../../config/paths.ts';
import { hookChecks } from '../../install/hookChecks.ts';
import { neededHookTimeout } from '../../install/neededHookTimeout.ts';
import type { Check } from '../../output/check.ts';
import { parsePolicy, PolicyError, type Policy } from '../../policy/policy.ts';
import { callDaemon } from '../../socket/daemonClient.ts';
import type { DaemonStatus } from '../../socket/localApi.ts';
import { checkSocketPathLength, SocketPathTooLongError } from '../../socket/securePath.ts';
import { openState, StateError } from '../../state/openState.ts';
import { printJson } from '../printJson.ts';
import { revokeAskedText } from './devices.ts';
import { overBudgetText } from './status.ts';
import { filesOverBudget } from '../../audit/auditRotation.ts';

/** `latch doctor --json`'s one object (docs/daemon.md#for-scripts): `ok` when every check passes. */
export interface DoctorJson {
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string; fix: string | null }[];
}

const INIT = 'run latch init';

/** Each check of `latch doctor`, in the order a person would fix them. */
export async function runChecks(): Promise<Check[]> {
  const home = latchHome();
  const files = latchFiles(home);
  const checks: Check[] = [];
  // Not set up yet: every check that needs the home says to run latch init, not ENOENT.
  const setUp = existsSync(files.config);
  let config: LatchConfig | undefined;
  try {
    config = loadConfig(files.config);
    checks.push({ name: 'config', ok: true, detail: files.config });
  } catch (error) {
    checks.push({
      name: 'config',
      ok: false,
      detail: setUp ? (error as Error).message : `Latch is not set up here: no ${files.config}`,
      fix: setUp ? `edit ${files.config}` : INIT,
    });
  }

  // Opened as every command opens it, never created: a new state.db would vouch for nothing.
  let phones: number | undefined;
  let revokesAsked: { id: string; name: string; by: string }[] = [];
  let inForce: LatchConfig | undefined;
  let overBudget = 0;
  if (config) {
    try {
      const state = openState(files);
      const devices = state.store.devices();
      phones = devices.length;
      revokesAsked = devices.flatMap(({ id, name, revokeAsked }) =>
        revokeAsked ? [{ id, name, by: revokeAsked.by }] : [],
      );
      inForce = state.config;
      overBudget = filesOverBudget(files.audit, state.store, state.config.audit);
      state.store.close();
      checks.push({ name: 'state', ok: true, detail: `${files.state} matches ${files.audit}` });
      if (overBudget > 0)
        checks.push({ name: 'audit history', ok: true, warning: true, detail: overBudgetText(overBudget) });
    } catch (error) {
      checks.push({
        name: 'state',
        ok: false,
        detail: (error as Error).message,
        fix:
          error instanceof StateError
            ? 'latch init --reset (keeps the old state aside; pair your phones again)'
            : `edit ${files.config}`,
      });
    }
    try {
      const host = await loadHostIdentity(files.hostKey);
      checks.push({ name: 'host key', ok: true, detail: `${files.hostKey} (host ${host.id})` });
    } catch (error) {
      checks.push({
        name: 'host key',
        ok: false,
        detail: (error as Error).message,
        fix: `restore ${files.hostKey} from a backup, or set this host up anew`,
      });
    }
  }

  // lstat: a link in a secret's place is named, not judged by the mode of what it points to.
  const isLink = (path: string) => lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true;
  const ownerOnly = ownerOnlyPlaces(home);
  const secrets = ownerOnly.files.filter((path) => existsSync(path) || isLink(path));
  const links = secrets.filter(isLink);
  const loose = secrets.filter((path) => !isLink(path) && (lstatSync(path).mode & 0o077) !== 0);
  const open = ownerOnly.folders.filter(
    (folder) => ((lstatSync(folder, { throwIfNoEntry: false })?.mode ?? 0) & 0o077) !== 0,
  );
  const faults = [
    open.length > 0 && { detail: `others can enter ${open.join(', ')}`, fix: `chmod 700 ${open.join(' ')}` },
    loose.length > 0 && {
      detail: `readable by others: ${loose.join(', ')}`,
      fix: `chmod 600 ${loose.join(' ')}`,
    },
    links.length > 0 && {
      detail: `links, not files: ${links.join(', ')}`,
      fix: `remove ${links.join(' ')} (Latch never reads or writes a secret through a link)`,
    },
  ].filter((fault) => fault !== false);
  checks.push(
    faults.length === 0
      ? {
          name: 'file modes',
          ok: true,
          detail: `${secrets.length} files, all 0600, in a folder only you can enter`,
        }
      : {
          name: 'file modes',
          ok: false,
          detail: faults.map((fault) => fault.detail).join('; '),
          fix: faults.map((fault) => fault.fix).join('; '),
        },
  );

  const socket = socketPath();
  let status: DaemonStatus | undefined;
  try {
    checkSocketPathLength(socket);
    status = await callDaemon<DaemonStatus>('GET', '/v1/status', undefined, { timeoutMs: 3000 });
    checks.push({ name: 'socket privacy', ok: true, detail: `${socket}: private path, daemon answering` });
  } catch (error) {
    checks.push({
      name: 'socket privacy',
      ok: false,
      detail: (error as Error).message,
      fix:
        error instanceof SocketPathTooLongError
          ? 'set XDG_RUNTIME_DIR (or, without it, LATCH_HOME) to a shorter folder, then start latch daemon'
          : setUp
            ? 'start latch daemon; keep its directory 0700 and owned by you, with no symlinks on the way'
            : `${INIT}, then latch daemon`,
    });
  }

  if (config) {
    try {
      const response = await fetch(`${config.relay.url}/v1/config`, { signal: AbortSignal.timeout(5000) });
      checks.push({
        name: 'relay reachable',
        ok: response.ok,
        detail: `${config.relay.url} answered ${response.status}`,
        ...(response.ok ? {} : { fix: 'check relay.url' }),
      });
    } catch (error) {
      checks.push({
        name: 'relay reachable',
        ok: false,
        detail: `${config.relay.url}: ${(error as Error).message}`,
        fix: 'check relay.url and the network; start the relay (npm start in the repository) or deploy your own (latch relay deploy)',
      });
    }
  }
  if (phones !== undefined && inForce) {
    const token = existsSync(files.hostToken);
    checks.push({
      name: 'devices paired',
      ok: phones > 0 && token,
      detail: `${phones} phone${phones === 1 ? '' : 's'}${token ? '' : ', no host token'}`,
      ...(phones > 0 && token ? {} : { fix: 'run latch pair' }),
    });
    const { quorum } = inForce.killSwitch;
    checks.push({
      name: 'quorum reachable',
      ok: phones >= quorum,
      detail: `resuming takes ${quorum}, ${phones} paired`,
      ...(phones >= quorum
        ? {}
        : {
            fix: 'pair more phones, or lower kill_switch.quorum (while frozen, that is not enough: see docs/kill-switch.md, Resume)',
          }),
    });
    for (const { id, name, by } of revokesAsked)
      checks.push({
        name: 'revoke asked in the app',
        ok: false,
        detail: `${name} (${id}): ${revokeAskedText({ by })}`,
        fix: `latch devices --revoke ${id} if you asked it; latch devices --keep ${id} if not`,
      });
  }

  let policy: Policy | undefined;
  try {
    if (!existsSync(files.policy)) throw new PolicyError(`no policy at ${files.policy}`);
    policy = parsePolicy(readFileSync(files.policy, 'utf8'));
    const pending = status?.policy === 'loosening_pending';
    checks.push({
      name: 'policy',
      ok: !pending,
      detail: pending
        ? 'a loosening waits for a phone’s approval; the previous policy is in force'
        : files.policy,
      ...(pending ? { fix: 'approve it on your phone' } : {}),
    });
  } catch (error) {
    checks.push({
      name: 'policy',
      ok: false,
      detail: (error as Error).message,
      fix: setUp ? `fix ${files.policy}; until then every gated call is denied` : INIT,
    });
  }
  checks.push(...(await hookChecks(config && policy ? neededHookTimeout(config, policy) : undefined)));
  // Self-protection guards the system's places it knows, where the daemon's user may write them;
  // an agent running as root may write every other one too.
  if (process.geteuid?.() === 0)
    checks.push({
      name: 'running as root',
      ok: true,
      warning: true,
      detail:
        'an agent running as root can change system places Latch cannot all know (the agents’ managed settings, start-up files, libraries); run agents as a user of their own',
    });
  return checks;
}

export async function run(options: { json?: boolean }): Promise<void> {
  const checks = await runChecks();
  const ok = checks.every((check) => check.ok);
  if (options.json) {
    printJson({
      ok,
      checks: checks.map(({ name, ok, detail, fix }) => ({ name, ok, detail, fix: fix ?? null })),
    } satisfies DoctorJson);
    process.exit(ok ? 0 : 1);
  }
  for (const check of checks) {
    process.stdout.write(
      `${check.warning ? '!' : check.ok ? '✓' : '✗'} ${check.name}: ${check.detail}\n${check.ok || !check.fix ? '' : `  fix: ${check.fix}\n`}`,
    );
  }
  process.exit(ok ? 0 : 1);
}
