import type { Command } from 'commander';

/** An option as a completion script offers it. */
export interface CompletionOption {
  /** Its names as typed: `-V` and `--version`. */
  flags: string[];
  description: string;
  /** It takes a value: the next word is that value, not an option or a command. */
  takesValue: boolean;
  /** The values it takes where they are a fixed list (commander's choices), else none. */
  choices: readonly string[];
}

/** A command as a completion script offers it, with what may follow it. */
export interface CompletionCommand {
  /** The words from `latch` to it: "latch audit verify". */
  path: string;
  subcommands: { name: string; description: string }[];
  options: CompletionOption[];
  /** The values its arguments take where commander has a fixed list (latch install <agent>). */
  argumentChoices: readonly string[];
}

/**
 * Every command of `program`, depth first, read from commander itself (with the help command
 * and options it adds), so that a completion script cannot drift from the CLI it completes.
 */
export function completionModel(program: Command): CompletionCommand[] {
  const help = program.createHelp();
  const walk = (command: Command, path: string): CompletionCommand[] => {
    const subcommands = help.visibleCommands(command);
    return [
      {
        path,
        subcommands: subcommands.map((sub) => ({ name: sub.name(), description: sub.description() })),
        options: help.visibleOptions(command).map((option) => ({
          flags: [option.short, option.long].filter((flag) => flag !== undefined),
          description: option.description,
          takesValue: option.required || option.optional,
          choices: option.argChoices ?? [],
        })),
        argumentChoices: command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
      },
      ...subcommands.flatMap((sub) => walk(sub, `${path} ${sub.name()}`)),
    ];
  };
  return walk(program, program.name());
}
