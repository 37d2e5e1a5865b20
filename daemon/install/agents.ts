/** The agents whose hooks `latch install` writes. */
export const AGENTS = ['claude-code', 'codex'] as const;
export type Agent = (typeof AGENTS)[number];

export interface AgentHooks {
  /** How the agent is named to a person. */
  title: string;
  /** The hook events Latch answers for it, each with matcher "*". */
  events: readonly string[];
}

/**
 * Claude Code asks Latch before every tool call (PreToolUse) and in place of its own prompt
 * (PermissionRequest). Codex's gate is PreToolUse alone: its PermissionRequest fires only for
 * calls its `approval_policy` would ask about, after PreToolUse has already let them through,
 * so hooking both would ask a phone twice for the same call (docs/integrations.md, Codex).
 */
export const AGENT_HOOKS: Record<Agent, AgentHooks> = {
  'claude-code': { title: 'Claude Code', events: ['PreToolUse', 'PermissionRequest'] },
  codex: { title: 'Codex', events: ['PreToolUse'] },
};
