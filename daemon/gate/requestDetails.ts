import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes, utf8Length } from '../../shared/encoding/bytes.ts';
import type { RequestDetails, SimilarCall } from '../../shared/messages/approvals.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { keepLineStartAndEnd, keepStartAndEnd } from '../../shared/text/keepStartAndEnd.ts';
import { revealHidden } from '../../shared/text/revealHidden.ts';
import { sanitizeText, withoutStackedMarks } from '../../shared/text/sanitizeText.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { LatchConfig } from '../config/config.ts';
import type { RunScript } from '../policy/scriptsRun.ts';
import type { GateRequest } from '../socket/localApi.ts';
import type { PushFatigue } from './pushFatigue.ts';
import { requestCard } from './requestCard.ts';

/** What the phones are asked on: set by the policy (or the change), the call, and grants. */
export interface AskTerms {
  risk: RiskLevel;
  timeoutSeconds: number;
  target: string;
  similar?: SimilarCall;
  /** The scripts the command runs, shown after it (scriptsRun). */
  scripts?: readonly RunScript[];
  /** Why Latch's own rule asks, when it does: the card's first note. */
  ownRule?: string;
}

/**
 * The details a phone is shown for one request, cleaned and cut to the protocol's limits; what
 * was cut says so (`shortened`). Sealed per phone afterwards, and hashed into its binding.
 */
export function requestDetails(
  request: GateRequest,
  terms: AskTerms,
  requestId: string,
  context: { config: LatchConfig; hostId: string; fatigue: PushFatigue },
): RequestDetails {
  const { config, hostId, fatigue } = context;
  const now = Date.now();
  let shortened = request.shortened;
  const clean = (value: string, maxBytes: number, multiline = false) => {
    const unstacked = withoutStackedMarks(value);
    const cleaned = sanitizeText(unstacked, { maxBytes, multiline });
    shortened ||= cleaned.changed || unstacked !== value;
    return cleaned.text;
  };
  // Long texts keep their start and their end, so what hides at the end of a command shows.
  const shown = (value: string, maxBytes: number, keep = keepStartAndEnd) => {
    const kept = keep(value, maxBytes);
    shortened ||= kept.changed;
    return kept.text;
  };
  // What runs is shown as it runs: no character in it may read as another, or as nothing.
  const revealed = (text: string) => revealHidden(text, { multiline: true });
  // What a shell or an interpreter reads (a command, a script it runs), where a sign that only
  // looks like a quote or a `#` hides code from a reader.
  const revealedForCode = (text: string) => revealHidden(text, { multiline: true, shell: true });
  const revealedLine = (text: string) => revealHidden(text, { multiline: false });
  const asRuns: GateRequest = {
    ...request,
    paths: request.paths.map(revealedLine),
    ...(request.command !== undefined ? { command: revealedForCode(request.command) } : {}),
    ...(request.detail !== undefined ? { detail: revealed(request.detail) } : {}),
    ...(request.input !== undefined ? { input: revealed(request.input) } : {}),
    ...(request.diff !== undefined ? { diff: revealed(request.diff) } : {}),
    ...(request.cwd !== undefined ? { cwd: revealedLine(request.cwd) } : {}),
  };
  const scripts = (terms.scripts ?? []).map((script) => ({
    ...script,
    path: revealedLine(script.path),
    ...(script.part !== undefined ? { part: revealedLine(script.part) } : {}),
    // Why a script is unread may quote the agent's words (a package's spec): on one line, revealed.
    ...(script.unread !== undefined ? { unread: revealedLine(script.unread) } : {}),
    ...(script.text !== undefined ? { text: revealedForCode(script.text) } : {}),
  }));
  const card = requestCard(asRuns, scripts);
  const notes = [...(terms.ownRule ? [revealedLine(terms.ownRule)] : []), ...(card.notes ?? [])];
  const noteBytes = fairShares(notes.map(utf8Length), LIMITS.notesBytes);
  // A phone shown part of a command, a file's content or a tool's input asks for the most care
  // (type the target, wait), and offers no rule for calls like it: what is not shown is where a
  // `curl … | sh` would hide. So does one padded with empty lines, where a line hides in plain
  // sight between screens of nothing. (Cleaning what was revealed removes nothing: these sizes hold.)
  const shownCut =
    [card.detail, ...notes].some((text) => holdsLongGap(text, { code: true })) ||
    holdsLongGap(card.diff ?? '', { code: false }) ||
    utf8Length(card.detail) > LIMITS.detailBytes ||
    notes.some((note, at) => utf8Length(note) > noteBytes[at]!) ||
    scripts.some((script) => script.text === undefined) ||
    (card.diff !== undefined && utf8Length(card.diff) > LIMITS.diffBytes);
  return {
    v: PROTOCOL_VERSION,
    fleet: config.host.fleet,
    host: hostId,
    hostName: clean(config.host.name, LIMITS.nameBytes),
    requestId,
    agent: clean(request.agent, LIMITS.nameBytes),
    tool: clean(request.tool, LIMITS.nameBytes),
    title: shown(card.title, LIMITS.titleBytes, keepLineStartAndEnd),
    ...(card.description ? { description: clean(card.description, LIMITS.titleBytes) } : {}),
    detail: shown(card.detail, LIMITS.detailBytes),
    ...(notes.length > 0 ? { notes: notes.map((note, at) => shown(note, noteBytes[at]!)) } : {}),
    ...(asRuns.cwd ? { cwd: shown(asRuns.cwd, LIMITS.cwdBytes, keepLineStartAndEnd) } : {}),
    ...(card.project ? { project: clean(card.project, LIMITS.nameBytes) } : {}),
    ...(card.session ? { session: clean(card.session, LIMITS.nameBytes) } : {}),
    ...(card.diff ? { diff: shown(card.diff, LIMITS.diffBytes) } : {}),
    target: clean(revealedLine(terms.target), LIMITS.targetBytes),
    risk: shownCut ? 'critical' : terms.risk,
    createdAt: now,
    exp: now + terms.timeoutSeconds * 1000,
    nonce: toBase64url(randomBytes(16)),
    salt: toBase64url(randomBytes(16)),
    shortened,
    ...(terms.similar && !shownCut ? { similar: terms.similar } : {}),
    ...fatigue.terms(request, config.approvals, now),
  };
}

/** Shares a budget among texts of these sizes: each that fits its even share whole, the rest alike. */
function fairShares(sizes: readonly number[], budget: number): number[] {
  const shares = [...sizes];
  let left = budget;
  const smallestFirst = sizes.map((_, at) => at).sort((a, b) => sizes[a]! - sizes[b]!);
  smallestFirst.forEach((at, done) => {
    shares[at] = Math.min(sizes[at]!, Math.floor(left / (sizes.length - done)));
    left -= shares[at]!;
  });
  return shares;
}

/** Lines of nothing that push a line out of sight: see holdsLongGap. */
const MOST_IN_A_ROW = 20;
const MOST_LINES_OF_NOTHING = 40;
const LINE_OF_NOTHING = /^[-+ ]?[ \t]*(#+|:|\/\/)?[ \t]*$/;

/**
 * Padding that pushes a line out of sight: more lines of nothing in a row than any code has, or
 * more than 40 that make most of the text. A line of nothing is empty or a bare comment mark
 * (`#`, `:`, `//`; a diff's line keeps its `+`, `-` or space). In code (a command, a script),
 * so is one line said again and again in a row (`echo .` nine hundred times); in a file's
 * content, rows alike are data.
 */
function holdsLongGap(text: string, { code }: { code: boolean }): boolean {
  let inARow = 0;
  let inAll = 0;
  let previous: string | undefined;
  const lines = text.split('\n');
  for (const line of lines) {
    const nothing = LINE_OF_NOTHING.test(line);
    inARow = nothing || (code && line === previous) ? inARow + 1 : 0;
    if (inARow > MOST_IN_A_ROW) return true;
    if (nothing) inAll++;
    previous = line;
  }
  return inAll > MOST_LINES_OF_NOTHING && inAll * 2 > lines.length;
}
