import type { CompletionCommand } from './completionModel.ts';
import { quoted } from '../../install/shellWords.ts';

/**
 * The bash script: it finds the command typed so far by walking the words, then offers that
 * command's subcommands, options and argument values, or an option's values after it. An
 * option whose value is free text offers nothing of Latch's: bash's own file names follow.
 */
export function bashCompletion(commands: readonly CompletionCommand[]): string {
  const words = (list: readonly string[]) => quoted(list.join(' '));
  const paths = commands.slice(1).map((command) => quoted(command.path));
  const valueArms = commands.flatMap((command) =>
    command.options
      .filter((option) => option.takesValue)
      .map((option) => {
        const patterns = option.flags.map((flag) => quoted(`${command.path} ${flag}`)).join(' | ');
        return option.choices.length > 0
          ? `    ${patterns}) COMPREPLY=($(compgen -W ${words(option.choices)} -- "$cur")); return ;;`
          : `    ${patterns}) return ;;`;
      }),
  );
  const commandArms = commands.map((command) => {
    const offered = [
      ...command.subcommands.map((sub) => sub.name),
      ...command.argumentChoices,
      ...command.options.flatMap((option) => option.flags),
    ];
    return `    ${quoted(command.path)}) COMPREPLY=($(compgen -W ${words(offered)} -- "$cur")) ;;`;
  });
  return `# bash completion for latch, made by \`latch completion bash\` from the CLI's own commands.
# Load it with: source <(latch completion bash)
# or save it as ~/.local/share/bash-completion/completions/latch
_latch() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} command=latch i
  for ((i = 1; i < COMP_CWORD; i++)); do
    # After --, the words are the command latch exec or latch mcp runs: bash completes them.
    [[ \${COMP_WORDS[i]} == -- ]] && return
    case "$command \${COMP_WORDS[i]}" in
    ${paths.join(' | ')}) command="$command \${COMP_WORDS[i]}" ;;
    esac
  done
  case "$command $prev" in
${valueArms.join('\n')}
  esac
  case "$command" in
${commandArms.join('\n')}
  esac
}
complete -o default -F _latch latch
`;
}
