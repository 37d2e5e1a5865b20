import { runMcpGate } from '../../mcp/mcpGate.ts';

export async function run(command: string[], options: { name?: string }): Promise<void> {
  process.exit(await runMcpGate(command, options));
}
