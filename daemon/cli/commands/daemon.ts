import { setFlagsFromString } from 'node:v8';
import { latchHome } from '../../config/paths.ts';
import { runDaemon } from '../../daemonProcess.ts';
import { LastingFault } from '../../lastingFault.ts';
import { DAEMON_REFUSED_EXIT } from '../exitCodes.ts';
import { fail } from '../home.ts';

/**
 * Keeps V8's young generation at its starting size. Under a burst of approvals it would grow to
 * 16 MB per semi-space and stay there, about 15 MB of a long-lived daemon's resident memory
 * (bench/daemonMemory.ts); the daemon's bursts are small, so more frequent sub-millisecond
 * scavenges cost nothing anyone waits on. V8 reads this flag each time it considers growing the
 * space, so setting it at run time takes effect.
 */
const YOUNG_GENERATION_FLAGS = '--semi-space-growth-factor=1';

export async function run(): Promise<void> {
  setFlagsFromString(YOUNG_GENERATION_FLAGS);
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
