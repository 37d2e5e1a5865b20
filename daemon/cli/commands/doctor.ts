import { existsSync, readFileSync, statSync } from 'node:fs';
import { ConfigError, loadConfig, type LatchConfig } from '../../config/config.ts';
import { latchFiles, latchHome, socketPath } from '../../config/paths.ts';
import { hookChecks } from '../../install/hookChecks.ts';
import { neededHookTimeout } from '../../install/neededHookTimeout.ts';
import { parsePolicy, PolicyError, type Policy } from '../../policy/policy.ts';
import { callDaemon } from '../../socket/daemonClient.ts';
import type { DaemonStatus } from '../../socket/localApi.ts';
import { StateStore } from '../../state/stateStore.ts';
import type { Check } from '../check.ts';

/** Each check of `latch doctor`, in the order a person would fix them. */
export async function runChecks(): Promise<Check[]> {
  const home = latchHome();
  const files = latchFiles(home);
  const checks: Check[] = [];
  let config: LatchConfig | undefined;
  try {
    config = loadConfig(files.config);
    checks.push({ name: 'config', ok: true, detail: files.config });
  } catch (error) {
    const missing = error instanceof ConfigError && error.code === 'config_missing';
    checks.push({
      name: 'config',
      ok: false,
      detail: (error as Error).message,
      fix: missing ? 'run latch init' : `edit ${files.config}`,
    });
  }

  const secrets = [files.config, files.hostKey, files.hostToken, files.totp, files.state, files.audit].filter(
    (path) => existsSync(path),
  );
  const loose = secrets.filter((path) => (statSync(path).mode & 0o077) !== 0);
  checks.push(
    loose.length === 0
      ? { name: 'file modes', ok: true, detail: `${secrets.length} files, all 0600` }
      : {
          name: 'file modes',
          ok: false,
          detail: `readable by others: ${loose.join(', ')}`,
          fix: `chmod 600 ${loose.join(' ')} (the daemon also tightens them at start)`,
        },
  );

  const socket = socketPath();
  let status: DaemonStatus | undefined;
  try {
    status = await callDaemon<DaemonStatus>('GET', '/v1/status', undefined, { timeoutMs: 3000 });
    checks.push({ name: 'socket privacy', ok: true, detail: `${socket}: private path, daemon answering` });
  } catch (error) {
    checks.push({
      name: 'socket privacy',
      ok: false,
      detail: (error as Error).message,
      fix: 'start latch daemon; keep its directory 0700 and owned by you, with no symlinks on the way',
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
        fix: 'start the relay (npm start) or check relay.url and the network',
      });
    }
    const store = new StateStore(files.state);
    const phones = store.devices().length;
    store.close();
    const token = existsSync(files.hostToken);
    checks.push({
      name: 'devices paired',
      ok: phones > 0 && token,
      detail: `${phones} phone${phones === 1 ? '' : 's'}${token ? '' : ', no host token'}`,
      ...(phones > 0 && token ? {} : { fix: 'run latch pair' }),
    });
    checks.push({
      name: 'quorum reachable',
      ok: phones >= config.killSwitch.quorum,
      detail: `resuming takes ${config.killSwitch.quorum}, ${phones} paired`,
      ...(phones >= config.killSwitch.quorum ? {} : { fix: 'pair more phones, or lower kill_switch.quorum' }),
    });
  }

  let policy: Policy | undefined;
  try {
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
    const message = error instanceof PolicyError ? error.message : (error as Error).message;
    checks.push({
      name: 'policy',
      ok: false,
      detail: message,
      fix: `fix ${files.policy}; until then every gated call is denied`,
    });
  }
  checks.push(...hookChecks(config && policy ? neededHookTimeout(config, policy) : undefined));
  return checks;
}

export async function run(): Promise<void> {
  const checks = await runChecks();
  for (const check of checks) {
    process.stdout.write(
      `${check.ok ? '✓' : '✗'} ${check.name}: ${check.detail}\n${check.ok || !check.fix ? '' : `  fix: ${check.fix}\n`}`,
    );
  }
  process.exit(checks.every((check) => check.ok) ? 0 : 1);
}
