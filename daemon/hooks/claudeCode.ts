import { shellCommand } from '../install/shellWords.ts';
import { PATCH_TOOL } from '../policy/selfProtection.ts';
import type { GateQuestion } from '../socket/askDaemon.ts';
import type { GateAnswer } from '../socket/localApi.ts';
import { toolInputText } from '../socket/toolInputText.ts';
import { fileEditDiff } from './fileEditDiff.ts';
import { patchHeaders } from '../gate/patchHeaders.ts';

export const CLAUDE_CODE_EVENTS = ['PreToolUse', 'PermissionRequest'] as const;
export type ClaudeCodeEvent = (typeof CLAUDE_CODE_EVENTS)[number];

export interface ClaudeCodeHookInput {
  event: ClaudeCodeEvent;
  question: GateQuestion;
}

const asString = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * Permission modes in which a person sees the agent's own prompt. In any other mode
 * (`bypassPermissions`, `dontAsk`, `auto`, one a later version adds, or none given) nobody
 * would, so a policy "defer" must not hand the call to that prompt: it asks a phone instead.
 */
const ATTENDED_MODES = new Set(['default', 'acceptEdits', 'plan']);

/**
 * Reads the JSON Claude Code writes to a hook's stdin (session_id, hook_event_name, tool_name,
 * tool_input, cwd, and for PreToolUse tool_use_id) into a question for the daemon. For a file
 * edit it reads the file the tool names, to send the diff a phone shows.
 */
export function parseClaudeCodeHookInput(text: string): ClaudeCodeHookInput | { error: string } {
  let raw: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { error: 'the hook input is not a JSON object' };
    raw = parsed as Record<string, unknown>;
  } catch {
    return { error: 'the hook input is not JSON' };
  }
  const event = asString(raw['hook_event_name']);
  if (!event) return { error: 'the hook input has no hook_event_name' };
  if (!CLAUDE_CODE_EVENTS.includes(event as ClaudeCodeEvent)) {
    // The name is the agent's text: quoted, and cut, since the agent reads this line.
    return {
      error: `the hook input's hook_event_name ${JSON.stringify(event.slice(0, 64))} is neither PreToolUse nor PermissionRequest`,
    };
  }
  const tool = asString(raw['tool_name']);
  if (!tool) return { error: 'the hook input has no tool_name' };
  const given = raw['tool_input'] ?? {};
  if (typeof given !== 'object' || Array.isArray(given))
    return { error: "the hook input's tool_input is not a JSON object" };
  const input = given as Record<string, unknown>;
  const inputText = toolInputText(input);
  if ('error' in inputText) return inputText;
  const command = patchOf(tool, input['command']) ?? commandOf(input['command']);
  const paths = [
    ...['file_path', 'path', 'notebook_path']
      .map((key) => asString(input[key]))
      .filter((path): path is string => path !== undefined),
    ...(command !== undefined ? patchPaths(command) : []),
  ];
  const session = asString(raw['session_id']);
  const toolUseId = asString(raw['tool_use_id']);
  const cwd = asString(raw['cwd']);
  const description = asString(input['description']);
  const diff = fileEditDiff(tool, input, cwd);
  // Leaving the sandbox: Claude Code's dangerouslyDisableSandbox, Codex's escalation
  // (with_escalated_permissions, sandbox_permissions but "use_default"). Any value but false or
  // none is read as leaving it ("true", 1): the safe side.
  const set = (key: string) => input[key] !== undefined && input[key] !== false;
  const unsandboxed =
    set('dangerouslyDisableSandbox') ||
    set('with_escalated_permissions') ||
    (set('sandbox_permissions') && input['sandbox_permissions'] !== 'use_default');
  return {
    event: event as ClaudeCodeEvent,
    question: {
      agent: 'claude-code',
      tool,
      paths,
      input: inputText.text,
      canDefer: ATTENDED_MODES.has(asString(raw['permission_mode']) ?? ''),
      ...(unsandboxed ? { unsandboxed: true } : {}),
      ...(command !== undefined ? { command } : {}),
      // The agent's own words: shown under its command, never instead of it (gate/requestCard).
      ...(description !== undefined && command !== undefined ? { title: description } : {}),
      ...(diff !== undefined ? { diff } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
      ...(session !== undefined ? { session } : {}),
      ...(toolUseId !== undefined ? { toolUseId } : {}),
    },
  };
}

/**
 * A command as a tool gives it: a string, or an argv (`["bash", "-lc", "…"]`), read as the one
 * command for `sh -c` that runs the same, so that nothing it runs goes unread.
 */
function commandOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length > 0 && value.every((word) => typeof word === 'string'))
    return shellCommand(value);
  return undefined;
}

/**
 * A Codex patch given as an argv, `["apply_patch", patch]`: Codex applies the patch, which runs no
 * shell; read as one (`apply_patch '*** Begin Patch…'`) its headers were globs matching anything,
 * Latch's secrets included. Its command is then the patch, as when given whole.
 */
function patchOf(tool: string, value: unknown): string | undefined {
  if (tool !== PATCH_TOOL || !Array.isArray(value) || value.length !== 2) return undefined;
  const [program, patch] = value as unknown[];
  if ((program !== 'apply_patch' && program !== 'applypatch') || typeof patch !== 'string') return undefined;
  return patch.trimStart().startsWith('*** Begin Patch') ? patch : undefined;
}

/**
 * The files a Codex patch writes (`apply_patch`, or a command that runs one): each is judged as
 * a file tool's path is, so that a project's agent folders are guarded as for Claude Code's Write.
 */
function patchPaths(command: string): string[] {
  return patchHeaders(command).map(({ path }) => path);
}

/** What the hook does with an answer: print `stdout` (if any) and exit 0, or block (exit 2). */
export type HookReply = { stdout?: object } | { block: string };

/**
 * Claude Code's reply: every deny blocks with exit 2 and its reason on stderr, which Claude Code
 * reads for both events whatever else reached stdout. A JSON deny counts only if stdout is that
 * JSON alone: a line any preload of the user's `NODE_OPTIONS` printed first (dotenv's, say) made
 * it plain text, and the tool ran. Allow and defer stay JSON: spoiled, they fall back to Claude
 * Code's own permission flow, as if Latch had not answered.
 */
export function claudeCodeHookReply(event: ClaudeCodeEvent, answer: GateAnswer): HookReply {
  if (answer.decision === 'deny') return { block: answer.reason };
  const stdout = claudeCodeHookOutput(event, answer);
  return stdout ? { stdout } : {};
}

/**
 * The JSON form of an answer. PreToolUse answers allow, deny or ask (ask: Claude Code's own
 * prompt). PermissionRequest answers allow or deny; to defer it prints nothing, which leaves the
 * prompt Claude Code is about to show.
 */
export function claudeCodeHookOutput(event: ClaudeCodeEvent, answer: GateAnswer): object | undefined {
  if (event === 'PreToolUse') {
    const permissionDecision =
      answer.decision === 'allow' ? 'allow' : answer.decision === 'defer' ? 'ask' : 'deny';
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision,
        permissionDecisionReason: `latch: ${answer.reason}`,
      },
    };
  }
  if (answer.decision === 'defer') return undefined;
  return {
    hookSpecificOutput: {
      hookEventName: 'PermissionRequest',
      decision:
        answer.decision === 'allow'
          ? { behavior: 'allow' }
          : { behavior: 'deny', message: `latch: ${answer.reason}` },
    },
  };
}
