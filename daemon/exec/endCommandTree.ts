import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandTree } from './commandTree.ts';

/**
 * Ends what is left of a run: SIGTERM, then SIGKILL for whatever is still there after `graceMs`.
 * A held tree gets SIGKILL at once: while the fleet is frozen, nothing of it runs again, not even
 * a SIGTERM handler.
 */
export async function endCommandTree(
  tree: CommandTree,
  options: { held: boolean; graceMs: number },
): Promise<void> {
  if (!tree.alive()) return;
  if (!options.held) {
    tree.signal('SIGTERM');
    for (const until = Date.now() + options.graceMs; Date.now() < until; await sleep(50)) {
      if (!tree.alive()) return;
    }
  }
  tree.signal('SIGKILL');
}
