import { latchHome } from '../../config/paths.ts';
import { runDaemon } from '../../daemonProcess.ts';
import { LastingFault } from '../../lastingFault.ts';
import { daemonLog as log } from '../../output/daemonLog.ts';
import { DAEMON_REFUSED_EXIT } from '../exitCodes.ts';
import { fail } from '../home.ts';

export async function run(): Promise<void> {
  let daemon;
  try {
    daemon = await runDaemon(latchHome());
  } catch (error) {
    fail((error as Error).message, error instanceof LastingFault ? DAEMON_REFUSED_EXIT : 1);
  }
  const stop = async (code = 0) => {
    await daemon.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  // Unreachable, it would serve nobody: it stops with 1, a failure a service manager sees and
  // restarts (making the socket anew, or refusing while another daemon holds it), whoever has the
  // socket now: a daemon that yielded with 0 left whatever took its place to answer its callers.
  void daemon.unreachable.then(({ why }) => {
    log(`${why}: no caller can reach this daemon, so it stops (exit 1)`);
    return stop(1);
  });
}
