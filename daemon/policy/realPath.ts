import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The longest path the kernel resolves (PATH_MAX on Linux): a longer one cannot be opened at all. */
export const PATH_MAX = 4096;
/** How many links the kernel follows in one path (Linux's MAXSYMLINKS) before it gives up. */
export const MAX_LINKS = 40;

/**
 * A path from a folder, as the kernel walks it: its `..` are kept for the walk. Taken out as text
 * (`path.resolve`), `link/..` cancels out, where the kernel goes to the parent of where the link
 * leads (`ln -s . d; ln -s d/.. up`: `up` is the folder above).
 */
export const asWalked = (folder: string, path: string): string =>
  path.startsWith('/') ? path : `${folder}/${path}`;

/**
 * Where an absolute path leads once symbolic links are followed: the real path of its deepest
 * existing ancestor, with the parts that do not exist yet after it. So a link to `totp.json`, a
 * link to where it would be (writing through it creates it), or a file about to be written
 * through a linked folder, resolves to the place it would touch. `parentPath` resolves the
 * parent of a path that does not exist (a caller's memo: many new names in one folder cost one
 * look each). Each look is the kernel's (lstat, realpath), on the path as written, so a `..` after
 * a link leads from where the link does.
 */
export function realPath(path: string, parentPath: (path: string) => string = realPath, links = 0): string {
  if (path.length > PATH_MAX) return path;
  try {
    // lstat first: a missing path is the common case, and a thrown error costs more than a call.
    // Equivalent mutants (Stryker): a throwing lstat, or realpath on a missing path, lands in the
    // catch below, which gives the same parent-based answer; so does skipping realpath for a path
    // that is not a link. These lines only save time.
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: only saves a throw
    const found = lstatSync(path, { throwIfNoEntry: false });
    // Stryker disable next-line OptionalChaining: a TypeError lands in the same catch
    if (found?.isSymbolicLink() && links < MAX_LINKS)
      return realPath(asWalked(parentPath(dirname(path)), readlinkSync(path)), parentPath, links + 1);
    // Stryker disable next-line ConditionalExpression: one system call instead of a walk up, same answer
    if (found) return realpathSync.native(path);
  } catch {
    // A name too long, a file where a folder should be, a loop of links, no permission to look:
    // no further than its parent, then.
  }
  const parent = dirname(path);
  // Stryker disable next-line ConditionalExpression: only `/` is its own parent, and it always exists
  return parent === path ? path : join(parentPath(parent), basename(path));
}
