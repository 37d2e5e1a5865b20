import { literalText, type SimpleCommand } from './commandWords.ts';

/**
 * The agents whose hooks Latch installs, as a program (`claude`, `/usr/bin/codex`) or as their
 * npm package (`npx @anthropic-ai/claude-code@latest`, `node …/@openai/codex/bin/codex.js`).
 */
const AGENTS = [
  { name: 'claude', package: /(^|\/)@anthropic-ai\/claude-code(@[^/]*)?(\/|$)/i },
  { name: 'codex', package: /(^|\/)@openai\/codex(@[^/]*)?(\/|$)/i },
] as const;

/**
 * What makes an agent read other settings than the ones self-protection guards, or fewer: Claude
 * Code's `--settings` (`{"disableAllHooks": true}`), `--setting-sources` (without `user`),
 * `--bare` and `--safe-mode` (which skip every hook), and the MCP servers, plugins and subagents
 * it starts outside every hook (`--mcp-config`, `--plugin-dir`, `--agents`); Codex's
 * `-c`/`--config` overrides, `--profile`, `--disable` (a feature such as its hooks) and
 * `--ignore-user-config` (the layer that holds its hooks and their trust).
 */
const OTHER_SETTINGS = {
  claude: /^--(settings|setting-sources|bare|safe-mode|mcp-config|plugin-dir|agents)(=|$)/,
  codex: /^(-[cp]|--(config|profile|disable|ignore-user-config)(=|$))/,
} as const;
/**
 * An agent's own commands that write its settings, by the two words that start them, wherever
 * they stand after its name (`claude --debug mcp add …`): a server or a plugin added runs outside
 * every hook from the next session on (`claude mcp add`, `claude plugin install`, `codex mcp
 * add`, `codex features disable`). And Claude Code's commands that replace the program that runs
 * the hooks, right after its name (`claude install`, `claude update`).
 */
const WRITES_SETTINGS = {
  claude:
    /^(mcp (add|add-json|add-from-claude-desktop|remove|reset-project-choices)|plugins? (?!list$)\S+|config (set|add|remove))$/,
  codex: /^(mcp (add|remove)|features (enable|disable))$/,
} as const;
const REPLACES_PROGRAM = /^(install|update|migrate-installer)$/;

/**
 * An agent hands its environment to its hooks, and the hook's socket (`XDG_RUNTIME_DIR`,
 * `LATCH_HOME`), its Node (`NODE_OPTIONS`), its loader (`LD_PRELOAD`), the shell that runs it
 * (`SHELL`) and the settings read (`CLAUDE_CONFIG_DIR`, `CLAUDE_CODE_SIMPLE`) are all read from
 * there: an agent started in another environment is guarded, whatever the variable. No list of
 * harmless names is kept, since the next version of any of them may read one more.
 */
const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** Programs whose options may start what follows in another environment: `env -i`, `exec -c`, `sudo -E`. */
const ENVIRONMENT_WRAPPERS = new Set([
  'env',
  'exec',
  'setpriv',
  'systemd-run',
  'sudo',
  'doas',
  'runuser',
  'su',
]);
/** The shell's words that set or drop its variables, which a program started after them inherits when exported. */
const SETS_VARIABLES = new Set([
  ...['export', 'unset', 'declare', 'typeset', 'local', 'readonly'],
  ...['read', 'mapfile', 'readarray', 'getopts', 'for', 'source', '.'],
]);
/** The shell's words that may come before a command's own: `do export X=1`, `if claude …`. */
const KEYWORDS = new Set(['do', 'then', 'else', 'elif', 'if', 'while', 'until', '!', '{', '(', 'time']);

/**
 * Whether a command sets or drops a shell variable: assignments alone (`XDG_RUNTIME_DIR=/tmp/x`
 * changes an exported one for what follows), `export`, `unset`, `read X`, `printf -v X`, a `for`
 * loop's variable, a file sourced; or a command only running names.
 */
function setsShellVariables(words: readonly (string | undefined)[]): boolean {
  const at = words.findIndex((text) => text === undefined || !KEYWORDS.has(text));
  if (at < 0) return false;
  const [first, ...rest] = words.slice(at);
  if (first === undefined) return true;
  if (first === 'printf') return rest.some((text) => text === undefined || text.startsWith('-v'));
  return (
    SETS_VARIABLES.has(first) ||
    [first, ...rest].every((text) => text !== undefined && ASSIGNMENT_WORD.test(text))
  );
}

/**
 * For each word of a command, whether a word before it starts what follows in another
 * environment: an assignment (`X=1 claude`, `env X=1 claude`), a wrapper's option (`env -i`,
 * `exec -c`, `setpriv --reset-env`, `systemd-run --setenv=…`), or a word only running tells
 * (`env $(cat vars) claude`). One pass, however long the command.
 */
function environmentChangedBefore(words: readonly (string | undefined)[]): boolean[] {
  let wrapped = false;
  let changed = false;
  return words.map((text) => {
    const before = changed;
    changed ||= text === undefined || ASSIGNMENT_WORD.test(text) || (wrapped && text.startsWith('-'));
    wrapped ||= text !== undefined && ENVIRONMENT_WRAPPERS.has(text.split('/').at(-1)!);
    return before;
  });
}

/**
 * The agent a command line starts with other settings than its guarded hook settings, or in
 * another environment, such that its own tool calls might pass no gate: an option that adds or
 * narrows settings after the agent's name; an assignment or a wrapper's option before it in its
 * command; a variable set or dropped anywhere in the line (`export CODEX_HOME=/tmp/c; codex exec
 * …`); or whose settings its own command writes (`claude mcp add`). A name counts wherever it
 * stands, as for the other commands self-protection knows (`xargs claude`): asking more is the
 * safe direction. Starting an agent plainly stays with the policy: its calls come through the
 * same hooks.
 */
export function startsAgentUnhooked(commands: readonly SimpleCommand[]): string | undefined {
  const texts = commands.map((command) => command.map(literalText));
  const lineSetsVariables = texts.some(setsShellVariables);
  for (const words of texts) {
    const changedBefore = environmentChangedBefore(words);
    // Whether a word after this one changes each agent's settings: one pass from the end, however
    // many times an agent is named (`claude claude claude …`).
    const changedAfter = { claude: false, codex: false };
    for (let i = words.length - 1; i >= 0; i--) {
      const text = words[i];
      if (text === undefined) continue;
      const agent = agentNamed(text);
      if (agent && (lineSetsVariables || changedBefore[i] || changedAfter[agent])) return agent;
      if (agent === 'claude' && REPLACES_PROGRAM.test(words[i + 1] ?? '')) return agent;
      const pair = `${text} ${words[i + 1] ?? ''}`;
      changedAfter.claude ||= OTHER_SETTINGS.claude.test(text) || WRITES_SETTINGS.claude.test(pair);
      changedAfter.codex ||= OTHER_SETTINGS.codex.test(text) || WRITES_SETTINGS.codex.test(pair);
    }
  }
  return undefined;
}

function agentNamed(text: string): 'claude' | 'codex' | undefined {
  const program = text.split('/').at(-1)?.toLowerCase();
  return AGENTS.find((agent) => program === agent.name || agent.package.test(text))?.name;
}
