import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { StateStore } from '../state/stateStore.ts';

/** One file of the audit chain: a rotated `audit.log.<n>`, or the live `audit.log` (no `lastSeq`). */
export interface AuditFile {
  path: string;
  name: string;
  /** A rotated file is named for the sequence number of its last line. */
  lastSeq: number | undefined;
}

export type RotatedFile = AuditFile & { lastSeq: number };

/**
 * The first sequence number the log still keeps: lines before it were deleted by Latch's own
 * retention (state.db's meta, written in the rotation's transaction). 1 until then.
 */
export function firstKeptSeq(store: StateStore): number {
  return Number(store.meta('audit_first_seq') ?? 1);
}

/** Where the live file goes when it is rotated after line `lastSeq`. */
export function rotatedPath(path: string, lastSeq: number): string {
  return `${path}.${lastSeq}`;
}

/** The rotated files beside `path`, oldest first. `audit.log.replaced-…` (init --reset) is not one. */
export function rotatedFiles(path: string): RotatedFile[] {
  const live = basename(path);
  return readdirSync(dirname(path))
    .flatMap((name) => {
      const number = /^\.([1-9]\d*)$/.exec(name.slice(live.length));
      return name.startsWith(live) && number
        ? [{ path: join(dirname(path), name), name, lastSeq: Number(number[1]) }]
        : [];
    })
    .sort((a, b) => a.lastSeq - b.lastSeq);
}

/**
 * The files that hold the kept chain, in order: the rotated files that end at or after the first
 * kept line (one still on disk below it is due for deletion, not part of the chain), then the
 * live file, which may not exist yet.
 */
export function keptAuditFiles(path: string, firstSeq: number): AuditFile[] {
  return [
    ...rotatedFiles(path).filter(({ lastSeq }) => lastSeq >= firstSeq),
    { path, name: basename(path), lastSeq: undefined },
  ];
}

/** A file's lines; a last line that lost its newline counts, an empty line inside does too. */
export function readAuditLines(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text.split('\n').filter((line, index, all) => line !== '' || index < all.length - 1);
}

/** Enough of a file's start or end to hold one line (an audit line carries at most a few KB). */
const EDGE_BYTES = 256 * 1024;

/** The non-empty lines within EDGE_BYTES of a file's start or of its end; none if it is missing. */
export function edgeLines(path: string, edge: 'start' | 'end'): string[] {
  const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  if (size === 0) return [];
  const length = Math.min(size, EDGE_BYTES);
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, length, edge === 'start' ? 0 : size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').split('\n').filter(Boolean);
}
