/** How `latch relay deploy` starts wrangler: a file to run and the words before wrangler's own. */
export interface WranglerCommand {
  file: string;
  args: string[];
  /** As a person would type it, for messages. */
  shown: string;
}

/**
 * The wrangler to run: `--wrangler <path>`, else `$LATCH_WRANGLER`, else the very version Latch's
 * relay is built and tested with, through npx (`--yes`: the package is named, pinned and fetched
 * from the registry npm is set to use; a prompt would stall a non-interactive deploy).
 * Undefined when none is given and no version is pinned.
 */
export function wranglerCommand(
  option: string | undefined,
  env: NodeJS.ProcessEnv,
  pinnedVersion: string | undefined,
): WranglerCommand | undefined {
  const path = option ?? env['LATCH_WRANGLER'];
  if (path) return { file: path, args: [], shown: path };
  if (!pinnedVersion) return undefined;
  const spec = `wrangler@${pinnedVersion}`;
  return { file: 'npx', args: ['--yes', spec], shown: `npx --yes ${spec}` };
}
