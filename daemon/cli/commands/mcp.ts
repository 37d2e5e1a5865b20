import { runMcpGate } from '../../mcp/mcpGate.ts';
import { defaultServerName, serverNameProblem } from '../../mcp/serverName.ts';
import { USAGE_EXIT } from '../exitCodes.ts';

export async function run(command: string[], options: { name?: string }): Promise<void> {
  // Told at start, before the server starts, not as a refusal of every call.
  const name = options.name ?? defaultServerName(command);
  const badName = serverNameProblem(name);
  if (badName) {
    process.stderr.write(`latch mcp: ${badName}\n`);
    process.exit(USAGE_EXIT);
  }
  process.exit(await runMcpGate(command, { name }));
}
