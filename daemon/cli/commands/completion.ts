import type { Command } from 'commander';
import { bashCompletion } from '../completion/bashCompletion.ts';
import { completionModel, type CompletionCommand } from '../completion/completionModel.ts';
import { fishCompletion } from '../completion/fishCompletion.ts';
import { zshCompletion } from '../completion/zshCompletion.ts';

export type Shell = 'bash' | 'zsh' | 'fish';

const SCRIPTS: Record<Shell, (commands: readonly CompletionCommand[]) => string> = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
};

/** `latch completion bash|zsh|fish`: the script for `program`, every command and option of it. */
export async function run(shell: Shell, program: Command): Promise<void> {
  process.stdout.write(SCRIPTS[shell](completionModel(program)));
}
