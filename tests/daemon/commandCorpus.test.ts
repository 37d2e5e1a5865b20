import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../daemon/policy/defaultPolicy.ts';
import { evaluatePolicy, parsePolicy } from '../../daemon/policy/policy.ts';
import { COMMAND_CORPUS } from './commandCorpus.ts';

const label = (command: string) =>
  JSON.stringify(command.length > 72 ? `${command.slice(0, 60)}… (${command.length} characters)` : command);

describe('the default policy over a corpus of real commands', () => {
  const policy = parsePolicy(DEFAULT_POLICY);

  it('holds at least 150 commands, none twice', () => {
    expect(COMMAND_CORPUS.length).toBeGreaterThanOrEqual(150);
    const keys = COMMAND_CORPUS.map((entry) => `${entry.tool ?? 'Bash'}\0${entry.command}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(COMMAND_CORPUS.map((entry) => [label(entry.command), entry] as const))(
    'answers %s as the corpus says',
    (_label, { command, tool, action, risk, rule }) => {
      expect(evaluatePolicy(policy, { tool: tool ?? 'Bash', command, paths: [] })).toMatchObject({
        action,
        ...(risk ? { risk } : {}),
        ...(rule ? { rule } : {}),
      });
    },
  );
});
