import { Command } from 'commander';
import { PROTOCOL_VERSION } from '../../shared/version.ts';

/** The `latch` command line. Each command lives in its own module; this file only wires them. */
export function buildProgram(): Command {
  return new Command('latch')
    .description('Hold AI agents’ dangerous actions until you approve them on your phone.')
    .version(`latch 0.1.0 (protocol v${PROTOCOL_VERSION})`, '-V, --version')
    .showHelpAfterError();
}

await buildProgram().parseAsync(process.argv);
