import { spawn } from 'node:child_process';
import { watchDaemon } from '../../socket/daemonClient.ts';
import { askDaemon } from '../askDaemon.ts';
import { openHome } from '../home.ts';
import { parseRisk } from './request.ts';

/** The exit code of `latch exec` when the command was not allowed to run. */
export const EXEC_DENIED = 126;

const shellQuote = (argument: string) =>
  /^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replace(/'/g, `'\\''`)}'`;

export async function run(argv: string[], options: { risk?: string; title?: string }): Promise<void> {
  const risk = parseRisk(options.risk);
  const { config } = openHome();
  const command = argv.map(shellQuote).join(' ');
  const answer = await askDaemon({
    agent: 'latch exec',
    tool: 'exec',
    command,
    cwd: process.cwd(),
    ...(risk ? { risk } : {}),
    ...(options.title ? { title: options.title } : {}),
  });
  if (answer.decision !== 'allow') {
    process.stderr.write(`latch: not running ${command}: ${answer.reason}\n`);
    process.exit(EXEC_DENIED);
  }

  // Its own process group, so that a freeze reaches everything the command starts.
  const child = spawn(argv[0]!, argv.slice(1), { stdio: 'inherit', detached: true });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  let stopped = false;
  const stopWatching = watchDaemon((state) => {
    if (state.frozen && !stopped) {
      stopped = config.killSwitch.onFreeze === 'stop';
      process.stderr.write(
        `latch: the fleet is frozen (${state.reason ?? 'no reason'}); ${stopped ? 'stopping' : 'terminating'} ${command}\n`,
      );
      signalGroup(config.killSwitch.onFreeze === 'stop' ? 'SIGSTOP' : 'SIGTERM');
    } else if (!state.frozen && stopped) {
      stopped = false;
      process.stderr.write(`latch: the fleet resumed; continuing ${command}\n`);
      signalGroup('SIGCONT');
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      signalGroup(signal);
      // A stopped process only acts on the signal once continued.
      if (stopped) signalGroup('SIGCONT');
    });
  }
  child.on('error', (error) => {
    process.stderr.write(`latch: cannot run ${argv[0]}: ${error.message}\n`);
    stopWatching();
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    stopWatching();
    process.exit(code ?? (signal ? 128 + 15 : 1));
  });
}
