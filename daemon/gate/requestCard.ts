import { basename, isAbsolute, relative, resolve } from 'node:path';
import { revealHidden } from '../../shared/text/revealHidden.ts';
import { realPath } from '../policy/realPath.ts';
import type { RunScript } from '../policy/scriptsRun.ts';
import { PATCH_TOOL } from '../policy/selfProtection.ts';
import type { GateRequest } from '../socket/localApi.ts';
import { RESERVED_AGENT } from '../socket/reservedAgent.ts';
import { shellReadingNotes } from './shellReadingNotes.ts';
import { patchHeaders } from './patchHeaders.ts';

/** The texts of a request's card, before cleaning: what the notification, the list and the screen show. */
export interface RequestCard {
  /** What runs or what changes, first: a command's first line, or "Edit src/app.ts". */
  title: string;
  /** The caller's own words for a command (Claude Code's description), shown under it. */
  description?: string;
  detail: string;
  /** Latch's own notes on a command, each whole: drawn apart from what the agent wrote. */
  notes?: string[];
  diff?: string;
  /** The folder the agent works in, by name. */
  project?: string;
  /** A short label of the agent session: enough to tell sessions apart, not the whole id. */
  session?: string;
}

const SESSION_LABEL_CHARACTERS = 8;

/**
 * Lays out what a person reads about a request. The card leads with the command or the action
 * itself: a caller's own description never stands in for it, and comes second.
 */
export function requestCard(request: GateRequest, scripts: readonly RunScript[] = []): RequestCard {
  // The phone joins "project · session · host" with middle dots: a folder named with one
  // (`app · 1a2b3c4d · laptop`) would read as another session and host.
  const project = request.cwd ? basename(request.cwd).replaceAll('·', '⟨U+00B7⟩') : '';
  // Latch's own changes are no agent's session: a phone would show "latch" twice, and offer to
  // report a session that is only Latch (review hc 13).
  const session = request.agent === RESERVED_AGENT ? undefined : request.session;
  const context = {
    ...(project ? { project } : {}),
    ...(session ? { session: [...session].slice(0, SESSION_LABEL_CHARACTERS).join('') } : {}),
  };
  if (request.command !== undefined) {
    const lines = request.command.trim().split('\n');
    // The first line that runs: a comment (`# list files`) says nothing of what does.
    const leading = lines.find((line) => !/^\s*(#|$)/.test(line)) ?? lines[0] ?? '';
    const others = lines.length - 1;
    const more = others > 0 ? ` (+${others} more line${others > 1 ? 's' : ''})` : '';
    // Runs of spaces are one in a title: `ls` and 400 spaces would push `; rm -rf ~` out of it.
    const title = patchTitle(request) ?? `${leading.replace(/\s+/g, ' ') || request.tool}${more}`;
    const description = request.title && request.title !== title ? { description: request.title } : {};
    const rest = inputBesidesCommand(request);
    // The command's box holds the command alone: a caller's detail beside it, unlabelled, read
    // as the command's own comment ("# dry run: nothing is deleted"). It is a note, said to be
    // the agent's.
    const notes = [
      ...(rest ? [`${ALSO_IN_INPUT}\n${rest}`] : []),
      ...shellReadingNotes(request.command),
      ...scripts.map(scriptShown),
      ...callerDetail(request),
    ];
    return {
      title,
      detail: request.command,
      ...(notes.length > 0 ? { notes } : {}),
      ...description,
      ...context,
    };
  }
  // Latch's own change (a loosening of its policy or config, no socket caller may ask as Latch):
  // its title and detail are Latch's words.
  if (request.agent === RESERVED_AGENT) {
    const own = { title: request.title ?? request.tool, detail: request.detail ?? request.paths.join('\n') };
    return { ...own, ...(request.diff !== undefined ? { diff: request.diff } : {}), ...context };
  }
  // What the call is, in Latch's words: its tool and what it acts on (a path, else its input on
  // one line). A caller's title is its own claim ("Transfer $10 to Alice" for a million to
  // mallory): shown as the agent's words, never as the heading or the notification.
  const path = request.paths[0];
  const title = path
    ? `${toolShown(request.tool)} ${shownPathAndLink(path, request.cwd)}`
    : request.input !== undefined && request.input.trim() !== ''
      ? `${toolShown(request.tool)} ${request.input.replace(/\s+/g, ' ').trim()}`
      : // A call that carries nothing but its title (`latch request --title …`): Latch has nothing
        // of its own to show, and the title stands in for nothing that runs.
        (request.title ?? toolShown(request.tool));
  const description = request.title && request.title !== title ? { description: request.title } : {};
  const notes = callerDetail(request);
  const said = { ...description, ...(notes.length > 0 ? { notes } : {}), ...context };
  // What runs is on the card whole: the input, or the paths; a caller's detail never stands in for it.
  if (request.diff !== undefined)
    return { title, detail: request.paths.join('\n'), diff: request.diff, ...said };
  return { title, detail: request.input ?? request.paths.join('\n'), ...said };
}

/**
 * A Codex patch's title: the files it changes, from its headers (`Update src/a.ts → ../b.sh;
 * Add README.md`), since every patch's first line is `*** Begin Patch`. The whole patch is the
 * card's detail.
 */
function patchTitle(request: GateRequest): string | undefined {
  if (request.tool !== PATCH_TOOL || request.command === undefined) return undefined;
  if (!request.command.trimStart().startsWith('*** Begin Patch')) return undefined;
  const changes: string[] = [];
  for (const { kind, path } of patchHeaders(request.command)) {
    if (kind === 'Move to' && changes.length > 0) changes[changes.length - 1] += ` → ${path}`;
    else changes.push(`${kind.split(' ')[0]} ${path}`);
  }
  return changes.length > 0 ? `Patch: ${changes.join('; ')}` : undefined;
}

/** Heads a caller's own detail on a card: drawn apart from what runs, said to be the agent's. */
const CALLER_DETAIL = 'The agent adds (its own words, not what runs):';

/** A caller's `detail`, as a note of its own, unless it is the command itself (`latch request --detail`). */
function callerDetail(request: GateRequest): string[] {
  const { detail } = request;
  if (detail === undefined || detail.trim() === '' || detail === request.command) return [];
  return [`${CALLER_DETAIL}\n${detail}`];
}

/** An MCP server's tool by its server and name (`mcp__notes__delete_note`: "notes: delete_note"). */
function toolShown(tool: string): string {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
  return mcp ? `${mcp[1]}: ${mcp[2]}` : tool;
}

/** Heads what a command's tool input holds besides the command on a phone. */
const ALSO_IN_INPUT = 'The tool is also given:';

/**
 * What a command's tool input holds besides the command and the agent's description, which the
 * card shows already (the description cleaned, on one line: nothing runs it): Claude Code's
 * `dangerouslyDisableSandbox` (the command runs outside its sandbox), `run_in_background`,
 * `timeout`, or anything a later version adds. The phone signs what it is shown, so nothing the
 * tool is given may go unshown.
 */
function inputBesidesCommand(request: GateRequest): string | undefined {
  if (request.input === undefined || request.input === request.command) return undefined;
  let input: unknown;
  try {
    input = JSON.parse(request.input);
  } catch {
    return request.input;
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return request.input;
  // The card's command has its hidden characters written out (requestDetails): the input's is raw.
  const isTheCommand = (value: unknown) =>
    typeof value === 'string' && revealHidden(value, { multiline: true, shell: true }) === request.command;
  const rest = Object.entries(input).filter(
    ([key, value]) =>
      !(key === 'command' && isTheCommand(value)) && !(key === 'description' && request.title !== undefined),
  );
  return rest.length > 0 ? JSON.stringify(Object.fromEntries(rest), null, 2) : undefined;
}

/**
 * What a script the command runs holds, since that is what runs; or why it is not shown. A path
 * that is no file's names what runs instead ("sh's input", "sudo's shell").
 */
const scriptShown = ({ path, text, unread, part }: RunScript) =>
  text === undefined
    ? isAbsolute(path)
      ? `The command runs the script ${path}, which Latch could not read (${unread}): what it holds is not shown.`
      : `The command runs ${path}, which Latch cannot show: ${unread}.`
    : part !== undefined
      ? `The command runs ${part} of ${path}:\n${text}`
      : `The command runs the script ${path}, which holds:\n${text}`;

/**
 * A file tool's path as shown, and where it leads when it names another file than it reads as:
 * what the tool writes is the file at the end (`docs/notes.md, a link to /home/me/.ssh/config`;
 * `/home/dev/app/../../.ssh/config, which is /home/.ssh/config`).
 */
function shownPathAndLink(path: string, cwd: string | undefined): string {
  const shown = shownPath(path, cwd);
  if (!isAbsolute(path)) return shown;
  const real = realPath(path);
  // Read from the file system, the link's end is written out as the path given was.
  const leadsTo = revealHidden(shownPath(real, cwd && isAbsolute(cwd) ? realPath(cwd) : cwd), {
    multiline: false,
  });
  if (leadsTo === shown) return shown;
  // Only `..`, `.` or doubled slashes made it another: no link was followed.
  return `${shown}, ${real === resolve(path) ? 'which is' : 'a link to'} ${leadsTo}`;
}

/** A path inside the project, relative to it; any other, whole. */
function shownPath(path: string, cwd: string | undefined): string {
  if (!cwd || !isAbsolute(path)) return path;
  const inside = relative(cwd, path);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
}
