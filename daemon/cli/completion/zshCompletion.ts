import type { CompletionCommand } from './completionModel.ts';
import { quoted } from '../../install/shellWords.ts';

/** `name:description`, as _describe reads it (a colon in the name escaped), or the name alone. */
const entry = (name: string, description?: string) =>
  quoted(`${name.replaceAll(':', '\\:')}${description === undefined ? '' : `:${description}`}`);

/**
 * The zsh script: the same walk as bash's, with each command and option described. It works
 * both sourced (it registers itself with compdef) and autoloaded from $fpath as `_latch`.
 */
export function zshCompletion(commands: readonly CompletionCommand[]): string {
  const paths = commands.slice(1).map((command) => quoted(command.path));
  const valueArms = commands.flatMap((command) =>
    command.options
      .filter((option) => option.takesValue)
      .map((option) => {
        const patterns = option.flags.map((flag) => quoted(`${command.path} ${flag}`)).join('|');
        return option.choices.length > 0
          ? `    (${patterns}) compadd -- ${option.choices.map(quoted).join(' ')}; return ;;`
          : `    (${patterns}) _default; return ;;`;
      }),
  );
  const commandArms = commands.map((command) => {
    const entries = [
      ...command.subcommands.map((sub) => entry(sub.name, sub.description)),
      ...command.argumentChoices.map((choice) => entry(choice)),
      ...command.options.flatMap((option) => option.flags.map((flag) => entry(flag, option.description))),
    ];
    return `    (${quoted(command.path)}) entries=(${entries.join(' ')}) ;;`;
  });
  return `#compdef latch
# zsh completion for latch, made by \`latch completion zsh\` from the CLI's own commands.
# Load it with: source <(latch completion zsh)   (after compinit)
# or save it as _latch in a folder of your $fpath.
_latch() {
  local command=latch i
  local -a entries
  for ((i = 2; i < CURRENT; i++)); do
    if [[ $words[i] == -- ]]; then
      # After --, the words are the command latch exec or latch mcp runs: complete it as one.
      shift i words
      (( CURRENT -= i ))
      _normal
      return
    fi
    case "$command $words[i]" in
    (${paths.join('|')}) command="$command $words[i]" ;;
    esac
  done
  case "$command $words[CURRENT-1]" in
${valueArms.join('\n')}
  esac
  case "$command" in
${commandArms.join('\n')}
  esac
  _describe -t latch latch entries
}
if [[ $funcstack[1] == _latch ]]; then _latch "$@"; else compdef _latch latch; fi
`;
}
