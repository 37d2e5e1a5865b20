import { latchHome } from '../../config/paths.ts';
import { runDaemon } from '../../daemonProcess.ts';
import { LastingFault } from '../../lastingFault.ts';
import { DAEMON_REFUSED_EXIT } from '../exitCodes.ts';
import { fail } from '../home.ts';

export async function run(): Promise<void> {
  let daemon;
  try {
    daemon = await runDaemon(latchHome());
  } catch (error) {
    fail((error as Error).message, error instanceof LastingFault ? DAEMON_REFUSED_EXIT : 1);
  }
  const stop = async () => {
    await daemon.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}
