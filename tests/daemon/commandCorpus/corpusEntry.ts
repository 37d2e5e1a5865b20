import type { RiskLevel } from '../../../shared/messages/common.ts';
import type { Action } from '../../../daemon/policy/policy.ts';

/**
 * Real shell commands and what the default policy must answer for each, as an agent's Bash tool
 * would send them. Where only "not allowed" matters (a spelling the destructive patterns miss is
 * asked at the default risk; one they catch, at high), an entry leaves risk and rule out.
 */
export interface CorpusEntry {
  command: string;
  action: Action;
  risk?: RiskLevel;
  rule?: string;
  tool?: string;
}

export const READ_ONLY = 'read-only shell commands';
export const DESTRUCTIVE = 'destructive shell commands';
const PUBLISHING = 'network writes and publishing';
const LONG = 'command over 4000 bytes, more than a phone shows';

export const allowed = (...commands: string[]): CorpusEntry[] =>
  commands.map((command) => ({ command, action: 'allow', risk: 'low', rule: READ_ONLY }));
export const destructive = (...commands: string[]): CorpusEntry[] =>
  commands.map((command) => ({ command, action: 'ask', risk: 'high', rule: DESTRUCTIVE }));
export const publishing = (...commands: string[]): CorpusEntry[] =>
  commands.map((command) => ({ command, action: 'ask', risk: 'medium', rule: PUBLISHING }));
/** No rule matches: the default asks a phone. */
export const unknown = (...commands: string[]): CorpusEntry[] =>
  commands.map((command) => ({ command, action: 'ask', risk: 'medium', rule: 'default' }));
/** Asked, whichever ask rule catches it. */
export const asked = (...commands: string[]): CorpusEntry[] =>
  commands.map((command) => ({ command, action: 'ask' }));
export const tooLong = (...commands: string[]): CorpusEntry[] =>
  commands.map((command) => ({ command, action: 'ask', risk: 'critical', rule: LONG }));
