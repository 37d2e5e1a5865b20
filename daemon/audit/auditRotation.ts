import { renameSync, rmSync, statSync } from 'node:fs';
import type { StateStore } from '../state/stateStore.ts';
import {
  edgeLines,
  firstKeptSeq,
  keptAuditFiles,
  rotatedFiles,
  rotatedPath,
  type RotatedFile,
} from './auditFiles.ts';

/** `[audit] rotate_bytes`, `keep_files` and `keep_hours` (docs/daemon.md). */
export interface AuditRotation {
  rotateBytes: number;
  keepFiles: number;
  /** Absent (a test's rotation): no minimum age. The config always sets it. */
  keepHours?: number;
}

export const AUDIT_ROTATION_DEFAULTS: AuditRotation = {
  rotateBytes: 10 * 1024 * 1024,
  keepFiles: 10,
  keepHours: 24,
};

const HOUR_MS = 3_600_000;

/**
 * When a rotated file's last line was written: its `at`, or, if that cannot be read, the file's
 * modification time (written with its last line).
 */
function lastWritten(file: RotatedFile): number {
  try {
    const at = Date.parse(
      (JSON.parse(edgeLines(file.path, 'end').at(-1) ?? '') as { at?: unknown }).at as string,
    );
    if (Number.isFinite(at)) return at;
  } catch {
    // Read from the file's time below.
  }
  return statSync(file.path, { throwIfNoEntry: false })?.mtimeMs ?? Number.POSITIVE_INFINITY;
}

/**
 * When each rotated file (oldest first) was last written: its last line's time, unless that lies
 * ahead of `now`, which cannot be right; such a file was written no later than the file after it,
 * nor than now. A file dated by a clock that ran ahead thus ages from the first file written after
 * the clock was set back, instead of counting as young until the clock passes its date plus
 * `keep_hours` (review rv10c). A file dated behind (a clock that ran late) shortens no other
 * file's life: each date at or before now is taken as it is (review rv2).
 */
function writtenBy(rotated: RotatedFile[], now: number): number[] {
  const latest: number[] = [];
  let bound = now;
  for (let index = rotated.length - 1; index >= 0; index--) {
    const own = lastWritten(rotated[index]!);
    bound = own <= now ? own : Math.min(bound, own);
    latest[index] = bound;
  }
  return latest;
}

/**
 * How many of the kept rotated files are beyond `keep_files`, kept because their last line is
 * younger than `keep_hours`: an agent's many calls (or anything else) wrote more in that time
 * than the budget holds. `latch doctor` and `latch status` say so.
 */
export function filesOverBudget(path: string, store: StateStore, rotation: AuditRotation): number {
  const rotated = keptAuditFiles(path, firstKeptSeq(store)).length - 1;
  return Math.max(0, rotated - rotation.keepFiles);
}

/**
 * Run in the append's write transaction, before a line of `lineBytes` is written: when the line
 * would take the live file past `rotateBytes`, the file becomes `audit.log.<its last seq>` and
 * the line starts a new one (a single line larger than the limit still gets a file). The chain
 * is untouched: the next line carries the hash of the last one, wherever it lies. Returns whether
 * it rotated.
 */
export function rotateIfFull(
  path: string,
  store: StateStore,
  lineBytes: number,
  rotation: AuditRotation,
  now: number = Date.now(),
): boolean {
  const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  // Stryker disable next-line BooleanLiteral: true only runs deleteBeyondRetention after an append that did not rotate (see auditLog.ts)
  if (size === 0 || size + lineBytes <= rotation.rotateBytes) return false;
  renameSync(path, rotatedPath(path, Number(store.meta('audit_seq') ?? 0)));
  const rotated = rotatedFiles(path);
  // Beyond keep_files, and old enough: a file whose last line is younger than keep_hours is
  // kept, and every later one with it, so a flood of lines cannot push out what came just before.
  const overCount = rotated.slice(0, Math.max(0, rotated.length - rotation.keepFiles));
  const keepMs = (rotation.keepHours ?? 0) * HOUR_MS;
  const young =
    keepMs > 0
      ? writtenBy(rotated, now).findIndex((at, index) => index < overCount.length && at > now - keepMs)
      : -1;
  const beyond = young === -1 ? overCount : overCount.slice(0, young);
  const firstKept = (beyond.at(-1)?.lastSeq ?? 0) + 1;
  // Never lowered: a writer that keeps more files (a CLI on the defaults) cannot claim back
  // lines another writer has already let go.
  // Stryker disable next-line EqualityOperator: >= writes the value already there
  if (firstKept > firstKeptSeq(store)) store.setMeta('audit_first_seq', String(firstKept));
  return true;
}

/**
 * Deletes the rotated files wholly before the first kept line. Run after the transaction that
 * recorded that line has committed: a crash in between leaves an extra old file, which the next
 * rotation deletes, never a recorded line missing. A file that cannot be deleted now is left to
 * the next rotation too: the line that rotated is written, and its caller must not hear otherwise.
 */
export function deleteBeyondRetention(path: string, store: StateStore): void {
  const firstKept = firstKeptSeq(store);
  for (const file of rotatedFiles(path)) {
    if (file.lastSeq >= firstKept) continue;
    try {
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: force only hides ENOENT, which the catch below ignores too
      rmSync(file.path, { force: true });
    } catch {
      // Tried again at the next rotation; verify skips it meanwhile.
    }
  }
}
