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
  // Unreachable, it would serve nobody: it stops, and a service manager starts it again (exit 1,
  // which makes the socket anew), unless another daemon answers there now (exit 0: that one serves).
  void daemon.unreachable.then(({ why, replaced }) => {
    log(`${why}: no caller can reach this daemon, so it stops`);
    return stop(replaced ? 0 : 1);
  });
}
