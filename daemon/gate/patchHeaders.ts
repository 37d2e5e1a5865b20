/** A Codex patch's file headers: what it adds, updates or deletes, and where an update moves to. */
const PATCH_HEADER = /^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$/;

/** What Rust's `trim`, which Codex's patch parser uses, takes off that JavaScript's keeps: NEL. */
const trimmedAsCodex = (line: string) => line.replace(/^[\s\u0085]+|[\s\u0085]+$/g, '');

export interface PatchHeader {
  kind: 'Add File' | 'Update File' | 'Delete File' | 'Move to';
  path: string;
}

/**
 * The file headers of a Codex patch, in order, each line trimmed as Codex's `apply_patch` trims
 * it: what the hook judges as the files the patch writes, and what the card names.
 */
export function patchHeaders(patch: string): PatchHeader[] {
  if (!patch.includes('*** Begin Patch')) return [];
  return patch.split('\n').flatMap((line) => {
    const header = PATCH_HEADER.exec(trimmedAsCodex(line));
    return header ? [{ kind: header[1] as PatchHeader['kind'], path: trimmedAsCodex(header[2]!) }] : [];
  });
}
