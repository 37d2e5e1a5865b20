import { claudeCodeHookOutput, parseClaudeCodeHookInput } from '../../hooks/claudeCode.ts';
import { codexHookReply } from '../../hooks/codex.ts';
import { askDaemon } from '../askDaemon.ts';
import { isInitialised } from '../../config/paths.ts';

const MAX_HOOK_INPUT_BYTES = 1024 * 1024;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_HOOK_INPUT_BYTES) throw new Error('the hook input is over 1 MiB');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Exit code 2 tells Claude Code and Codex to block the call and show stderr. */
function blockWith(reason: string): never {
  process.stderr.write(`latch: ${reason}\n`);
  process.exit(2);
}

export async function run(): Promise<void> {
  let text: string;
  try {
    text = await readStdin();
  } catch (error) {
    blockWith((error as Error).message);
  }
  const input = parseClaudeCodeHookInput(text);
  if ('error' in input) blockWith(input.error);
  // `latch hook codex`: Codex's hooks read Claude Code's JSON, and answer differently.
  const agent = process.argv[3] === 'codex' ? 'codex' : 'claude-code';
  const answer = isInitialised()
    ? await askDaemon({ ...input.question, agent })
    : ({
        decision: 'deny',
        blockReason: 'config_missing',
        reason: 'config_missing: Latch is not set up on this machine; run latch init',
      } as const);
  const reply =
    agent === 'codex'
      ? codexHookReply(input.event, answer)
      : { stdout: claudeCodeHookOutput(input.event, answer) };
  if ('block' in reply) blockWith(reply.block);
  if (reply.stdout) process.stdout.write(`${JSON.stringify(reply.stdout)}\n`);
  process.exit(0);
}
