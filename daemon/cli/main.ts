import { Command } from 'commander';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { registerAudit } from './commands/audit.ts';
import { registerDaemon } from './commands/daemon.ts';
import { registerDevices } from './commands/devices.ts';
import { registerDoctor } from './commands/doctor.ts';
import { registerExec } from './commands/exec.ts';
import { registerHook } from './commands/hook.ts';
import { registerHosts } from './commands/hosts.ts';
import { registerInit } from './commands/init.ts';
import { registerPair } from './commands/pair.ts';
import { registerPanic } from './commands/panic.ts';
import { registerRequest } from './commands/request.ts';
import { registerStatus } from './commands/status.ts';

/** The `latch` command line. Each command lives in its own module; this file only wires them. */
export function buildProgram(): Command {
  const program = new Command('latch')
    .description('Hold AI agents’ dangerous actions until you approve them on your phone.')
    .version(`latch 0.1.0 (protocol v${PROTOCOL_VERSION})`, '-V, --version')
    .showHelpAfterError();
  for (const register of [
    registerInit,
    registerPair,
    registerDaemon,
    registerStatus,
    registerPanic,
    registerDevices,
    registerHosts,
    registerDoctor,
    registerAudit,
    registerRequest,
    registerExec,
    registerHook,
  ]) {
    register(program);
  }
  return program;
}

await buildProgram().parseAsync(process.argv);
