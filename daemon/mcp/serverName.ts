import { basename } from 'node:path';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';

const MOST_NAME_BYTES = 64;

/** Programs that fetch and run a package named by their first word that is not an option. */
const PACKAGE_RUNNERS = new Set(['npx', 'pnpx', 'bunx', 'uvx']);
/** The same, behind a subcommand: `npm exec`, `pnpm dlx`, `yarn dlx`, `pipx run`, `uv tool run`. */
const PACKAGE_RUNNER_COMMANDS: Record<string, readonly string[]> = {
  npm: ['exec'],
  pnpm: ['dlx', 'exec'],
  yarn: ['dlx'],
  pipx: ['run'],
  uv: ['tool run'],
};
/** Programs that run the script named by their first word that is not an option. */
const SCRIPT_RUNNERS = /^(node|nodejs|bun|deno|tsx|python[\d.]*|uv)$/;

/**
 * The server's name in the policy (`mcp__<name>__<tool>`) when `--name` gives none: the package
 * a runner starts (`npx -y @modelcontextprotocol/server-github` is `server-github`) or the script
 * an interpreter runs (`node dist/notes.js` is `notes`), else the command's file name. A
 * launcher's own name would give every server it starts one name, and a rule written for one
 * server's tool would match another's of the same name.
 */
export function defaultServerName(command: readonly string[]): string {
  const program = basename(command[0]!);
  const asked = command.slice(1);
  const subcommand = PACKAGE_RUNNER_COMMANDS[program]?.find((words) =>
    words.split(' ').every((word, index) => asked[index] === word),
  );
  const rest = subcommand ? asked.slice(subcommand.split(' ').length) : asked;
  const words = rest.filter((word) => !word.startsWith('-'));
  if (PACKAGE_RUNNERS.has(program) || subcommand)
    // `@scope/name@1.2.3` is `name`; `pkg==1.0` (Python's) is `pkg`.
    return words[0]?.replace(/^@[^/]+\//, '').replace(/(.)[@=].*$/, '$1') || program;
  // `deno run x.ts`, `bun run x.ts`, `uv run x.py`.
  const script = words[0] === 'run' ? words[1] : words[0];
  if (SCRIPT_RUNNERS.test(program) && script !== undefined)
    return basename(script).replace(/\.[^.]+$/, '') || program;
  return program;
}

/**
 * Why `name` cannot stand for a server in `mcp__<name>__<tool>`, if it cannot: told when the gate
 * starts, not as a refusal of every call. Two `_` in a row would read as the end of the name, so
 * a rule for server `a` (`mcp__a__*`) would match the tools of a server named `a__b`. The name is
 * not repeated: it may hold what a terminal would act on.
 */
export function serverNameProblem(name: string): string | undefined {
  const clean = !sanitizeText(name, { maxBytes: MOST_NAME_BYTES, multiline: false }).changed;
  if (clean && name !== '' && !/\s|\/|__/.test(name)) return undefined;
  return `the server's name cannot stand in mcp__<name>__<tool>: give one with --name, of at most ${MOST_NAME_BYTES} bytes, without spaces, "/", two "_" in a row, or control or invisible characters`;
}
