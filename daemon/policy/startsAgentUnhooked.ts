import { literalText, type SimpleCommand } from './commandWords.ts';
import { WRAPPERS } from './scriptNames.ts';
import { RUNNERS } from './scriptsRun.ts';

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
 * there: an agent run in another environment is guarded, whatever the variable. No list of
 * harmless names is kept, since the next version of any of them may read one more.
 */
const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** The shell's words that set or drop its variables: `export X`, `read X`, `for X in …`, a file sourced. */
const SETS_VARIABLES = new Set([
  ...['export', 'unset', 'declare', 'typeset', 'local', 'readonly', 'let'],
  ...['read', 'mapfile', 'readarray', 'getopts', 'printf', 'for', 'source', '.'],
]);
/** What may come before a command's own word: the shell's keywords, and words that run it as it is. */
const BEFORE_A_COMMAND = new Set(['do', 'then', 'else', 'elif', 'if', 'while', 'until', '!', '{', '(']);
const RUNS_AS_IS = new Set(['builtin', 'command', 'eval', 'time', 'exec']);
/** Programs whose options start what follows in another environment: `env -i`, `exec -c`. */
const ENVIRONMENT_OPTIONS = new Set(['env', 'exec', 'setpriv', 'systemd-run']);
/** Programs that run what follows as another user, with that user's settings: no hooks of Latch's. */
const ANOTHER_USER = new Set(['sudo', 'doas', 'su', 'runuser', 'pkexec', 'machinectl']);
/** Programs that run a script they are given, which may be an agent's (`node …/claude-code/cli.js`). */
const INTERPRETERS = new Set(['node', 'bun', 'deno', 'tsx']);

const programName = (text: string) => text.split('/').at(-1)!;

/**
 * Whether a command may give what it runs another environment: an assignment anywhere in it
 * (`X=1 bash -c "claude"`, `let X=5`, `XDG_RUNTIME_DIR+=…`), a word that sets or drops a variable
 * where a command starts (`export`, `unset`, `read X`, `printf -v X`, a `for` loop's variable, a
 * file sourced; past `builtin`, `command`, `eval`), the options of `env`, `exec`, `setpriv` or
 * `systemd-run` there (`env -i`, `exec -c`, `--setenv=…`) or a word only running tells among
 * them, or another user (`sudo`, `su`).
 */
function changesEnvironment(words: readonly (string | undefined)[]): boolean {
  let start = true;
  let amongOptions = false;
  return words.some((text) => {
    const atStart = start;
    const wrapped = amongOptions;
    if (text === undefined) return wrapped;
    const name = programName(text);
    const assigns = ASSIGNMENT_WORD.test(text);
    const wrapperOption = wrapped && text.startsWith('-');
    start = BEFORE_A_COMMAND.has(text) || (atStart && (RUNS_AS_IS.has(text) || assigns));
    amongOptions = (atStart && ENVIRONMENT_OPTIONS.has(name)) || wrapperOption;
    return assigns || (atStart && SETS_VARIABLES.has(text)) || wrapperOption || ANOTHER_USER.has(name);
  });
}

/**
 * The agent a command runs: its program, or any agent named after a program that runs another
 * (`sudo`, `env`, `npx`, `node …/claude-code/cli.js`), or after one only running tells. Not one
 * an ordinary program is given (`ls ~/src/claude`, `git log -- codex`).
 */
function agentRun(words: readonly (string | undefined)[]): 'claude' | 'codex' | undefined {
  const at = words.findIndex(
    (text) => text === undefined || !(BEFORE_A_COMMAND.has(text) || ASSIGNMENT_WORD.test(text)),
  );
  if (at < 0) return undefined;
  const program = words[at];
  if (program !== undefined) {
    const agent = agentNamed(program);
    if (agent) return agent;
    const name = programName(program);
    const runsAnother = [WRAPPERS, RUNNERS, INTERPRETERS, ANOTHER_USER].some((set) => set.has(name));
    if (!runsAnother) return undefined;
  }
  for (const text of words.slice(at + 1)) {
    const agent = text === undefined ? undefined : agentNamed(text);
    if (agent) return agent;
  }
  return undefined;
}

/**
 * The agent a command line starts with other settings than its guarded hook settings, or in
 * another environment, such that its own tool calls might pass no gate: an option that adds or
 * narrows settings after the agent's name, wherever it stands (`xargs claude --settings …`); a
 * line that runs an agent and changes the environment anywhere (`export CODEX_HOME=/tmp/c; codex
 * exec …`, `XDG_RUNTIME_DIR=/x bash -c 'claude'`); or whose settings its own command writes
 * (`claude mcp add`). Asking more is the safe direction; an agent only named (`ls ~/src/claude`)
 * and an agent started plainly stay with the policy: its calls come through the same hooks.
 */
export function startsAgentUnhooked(commands: readonly SimpleCommand[]): string | undefined {
  const texts = commands.map((command) => command.map(literalText));
  if (texts.some(changesEnvironment)) {
    for (const words of texts) {
      const agent = agentRun(words);
      if (agent) return agent;
    }
  }
  for (const words of texts) {
    // Whether a word after this one changes each agent's settings: one pass from the end, however
    // many times an agent is named (`claude claude claude …`).
    const changedAfter = { claude: false, codex: false };
    for (let i = words.length - 1; i >= 0; i--) {
      const text = words[i];
      if (text === undefined) continue;
      const agent = agentNamed(text);
      if (agent && changedAfter[agent]) return agent;
      if (agent === 'claude' && REPLACES_PROGRAM.test(words[i + 1] ?? '')) return agent;
      const pair = `${text} ${words[i + 1] ?? ''}`;
      changedAfter.claude ||= OTHER_SETTINGS.claude.test(text) || WRITES_SETTINGS.claude.test(pair);
      changedAfter.codex ||= OTHER_SETTINGS.codex.test(text) || WRITES_SETTINGS.codex.test(pair);
    }
  }
  return undefined;
}

function agentNamed(text: string): 'claude' | 'codex' | undefined {
  const program = programName(text).toLowerCase();
  return AGENTS.find((agent) => program === agent.name || agent.package.test(text))?.name;
}
