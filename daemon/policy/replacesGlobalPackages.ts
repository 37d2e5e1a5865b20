import { literalText, type SimpleCommand } from './commandWords.ts';

/** Package managers' verbs that put, change or take away an installed package. */
const CHANGES = new Set([
  ...['install', 'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal', 'isntall', 'add'],
  ...['update', 'up', 'upgrade', 'udpate', 'uninstall', 'un', 'unlink', 'remove', 'rm', 'r', 'link', 'ln'],
]);

/**
 * Whether a command may put another package in place of a globally installed Latch: a global
 * install, update or removal by npm, pnpm, yarn or bun (`npm install -g /tmp/x`, whose
 * package.json says `@latchhq/latch`; `yarn global add`), or `npm link`, which installs the
 * package in the folder it runs in globally. The answer is the command as a person reads it.
 */
export function replacesGlobalPackages(command: SimpleCommand): string | undefined {
  const texts = command.map((word) => literalText(word)?.toLowerCase());
  const program = texts[0]?.split('/').at(-1);
  if (!program || !['npm', 'pnpm', 'yarn', 'bun'].includes(program)) return undefined;
  const args = texts.slice(1);
  const at = args.findIndex((text) => text === undefined || !text.startsWith('-'));
  if (at < 0) return undefined;
  const verb = args[at];
  const global = args.some(
    (text) => text === undefined || text === '-g' || text === '--global' || text === '--location=global',
  );
  // A verb only running tells may be any of them.
  if (verb !== undefined && !CHANGES.has(verb) && !(program === 'yarn' && verb === 'global'))
    return undefined;
  const links = program === 'npm' && (verb === undefined || verb === 'link' || verb === 'ln');
  return global || links || verb === 'global' ? `${program} ${verb ?? '…'}${global ? ' -g' : ''}` : undefined;
}
