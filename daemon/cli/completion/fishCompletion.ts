import type { CompletionCommand } from './completionModel.ts';

/** `text` as one fish word: single quotes, with `\` and `'` escaped. */
const fishQuote = (text: string) => `'${text.replace(/[\\']/g, '\\$&')}'`;

/**
 * The fish script: a function that walks the words to the command typed so far (the same walk
 * as bash's), and one `complete` line per subcommand, argument value and option, each offered
 * only where that command is the one typed.
 */
export function fishCompletion(commands: readonly CompletionCommand[]): string {
  const paths = commands.slice(1).map((command) => fishQuote(command.path));
  const lines = commands.flatMap((command) => {
    const where = `complete -c latch -n ${fishQuote(`test (__latch_command) = '${command.path}'`)}`;
    return [
      ...command.subcommands.map(
        (sub) => `${where} -a ${fishQuote(sub.name)} -d ${fishQuote(sub.description)}`,
      ),
      ...(command.argumentChoices.length > 0
        ? [`${where} -a ${fishQuote(command.argumentChoices.join(' '))}`]
        : []),
      ...command.options.map((option) => {
        const names = option.flags
          .map((flag) => (flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`))
          .join(' ');
        const value = !option.takesValue
          ? ''
          : option.choices.length > 0
            ? ` -x -a ${fishQuote(option.choices.join(' '))}`
            : ' -r';
        return `${where} ${names}${value} -d ${fishQuote(option.description)}`;
      }),
    ];
  });
  return `# fish completion for latch, made by \`latch completion fish\` from the CLI's own commands.
# Load it with: latch completion fish | source
# or save it as ~/.config/fish/completions/latch.fish
function __latch_command --description 'the latch command typed so far, or -- past --'
    set -l words (commandline -opc)
    set -e words[1]
    set -l command latch
    for word in $words
        if test "$word" = --
            echo -- -- # the first ends echo's options
            return
        end
        switch "$command $word"
            case ${paths.join(' ')}
                set command "$command $word"
        end
    end
    echo $command
end
complete -c latch -f
# After --, the words are the command latch exec or latch mcp runs.
complete -c latch -n 'test (__latch_command) = --' -F
${lines.join('\n')}
`;
}
