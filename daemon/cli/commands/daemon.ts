import type { Command } from 'commander';
import { latchHome } from '../../config/paths.ts';
import { runDaemon } from '../../daemonProcess.ts';
import { fail } from '../home.ts';

export function registerDaemon(program: Command): void {
  program
    .command('daemon')
    .description('run the daemon in the foreground (see docs/daemon.md for a systemd user unit)')
    .action(async () => {
      let daemon;
      try {
        daemon = await runDaemon(latchHome());
      } catch (error) {
        fail((error as Error).message, 1);
      }
      const stop = async () => {
        await daemon.stop();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop());
      process.on('SIGTERM', () => void stop());
    });
}
