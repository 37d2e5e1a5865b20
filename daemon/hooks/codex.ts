import type { GateAnswer } from '../socket/localApi.ts';
import { claudeCodeHookOutput, type ClaudeCodeEvent, type HookReply } from './claudeCode.ts';

/**
 * Codex's hooks read Claude Code's input JSON, but its PreToolUse accepts only a deny: it treats
 * `permissionDecision: "allow"` or `"ask"` as a failed hook and then runs the tool. So a
 * PreToolUse allow (or defer) prints nothing, which hands the call back to Codex's own approval
 * settings, and every deny blocks with exit 2, which Codex honours in every version with hooks.
 * Codex's PermissionRequest takes the same `decision.behavior` as Claude Code's.
 */
export function codexHookReply(event: ClaudeCodeEvent, answer: GateAnswer): HookReply {
  if (event === 'PreToolUse') {
    return answer.decision === 'allow' || answer.decision === 'defer' ? {} : { block: answer.reason };
  }
  const stdout = claudeCodeHookOutput(event, answer);
  return stdout ? { stdout } : {};
}
