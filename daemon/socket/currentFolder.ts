import { CallRefusedError } from './daemonSocket.ts';

/**
 * This process's folder, which a call's relative paths and commands are read from. A folder
 * deleted under a running process has no path: the call cannot be judged, and saying so is
 * the call's fault, not an unreachable daemon's.
 */
export function currentFolder(): string {
  try {
    return process.cwd();
  } catch (error) {
    throw new CallRefusedError(
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'the current folder no longer exists'
        : `the current folder cannot be read: ${(error as Error).message}`,
    );
  }
}
