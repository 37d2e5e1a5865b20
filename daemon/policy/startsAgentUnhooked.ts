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
 * Words that give the programs a line starts another environment: an assignment (`HOME=/tmp/x`,
 * `export XDG_RUNTIME_DIR=…`), a variable unset or exported, or `env` told to drop or clear some. An agent
 * hands its environment to its hooks, and the hook's socket (`XDG_RUNTIME_DIR`, `LATCH_HOME`),
 * its Node (`NODE_OPTIONS`), its loader (`LD_PRELOAD`), the shell that runs it (`SHELL`) and the
 * settings read (`CLAUDE_CONFIG_DIR`, `CLAUDE_CODE_SIMPLE`) are all read from there: no list of
 * harmless names is kept, since the next version of any of them may read one more.
 */
const CHANGES_ENVIRONMENT = /^([A-Za-z_][A-Za-z0-9_]*=|(unset|export)$)/;

/** Whether a command's words give what they start another environment, as above. */
const changesEnvironment = (words: readonly (string | undefined)[]) =>
  words.some((text, i) => {
    // `env -i`, `env -u XDG_RUNTIME_DIR`, or what only running tells (`env $(cat vars)`).
    const afterEnv = words[i - 1]?.split('/').at(-1) === 'env';
    return text === undefined
      ? afterEnv
      : CHANGES_ENVIRONMENT.test(text) || (afterEnv && text.startsWith('-'));
  });

/**
 * The agent a command line starts with other settings than its guarded hook settings, or in
 * another environment, such that its own tool calls might pass no gate: an option that adds or
 * narrows settings after the agent's name, or a variable assigned or unset anywhere in the line
 * (`export CODEX_HOME=/tmp/c; codex exec …`); or whose settings its own command writes (`claude
 * mcp add`). A mention counts wherever it stands, as for the other commands self-protection
 * knows: asking more is the safe direction. Starting an agent plainly stays with the policy:
 * its calls come through the same hooks.
 */
export function startsAgentUnhooked(commands: readonly SimpleCommand[]): string | undefined {
  const texts = commands.map((command) => command.map(literalText));
  const movesSettings = texts.some(changesEnvironment);
  for (const words of texts) {
    // Whether a word after this one changes each agent's settings: one pass from the end, however
    // many times an agent is named (`claude claude claude …`).
    const changedAfter = { claude: false, codex: false };
    for (let i = words.length - 1; i >= 0; i--) {
      const text = words[i];
      if (text === undefined) continue;
      const agent = agentNamed(text);
      if (agent && (movesSettings || changedAfter[agent])) return agent;
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
