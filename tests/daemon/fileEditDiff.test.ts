import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileEditDiff } from '../../daemon/hooks/fileEditDiff.ts';

let project: string;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'latch-edit-'));
  writeFileSync(join(project, 'notes.txt'), 'a = 1\nb = 1\nc = 1\n');
  execFileSync('mkfifo', [join(project, 'pipe')]);
});

describe('fileEditDiff', () => {
  it('applies replace_all to every occurrence, as Claude Code does', () => {
    expect(
      fileEditDiff(
        'Edit',
        { file_path: join(project, 'notes.txt'), old_string: '= 1', new_string: '= 2', replace_all: true },
        project,
      ),
    ).toBe(
      '--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n-a = 1\n-b = 1\n-c = 1\n+a = 2\n+b = 2\n+c = 2\n',
    );
  });

  it('shows the edit’s own text, not the whole file, when a replace_all would grow it past 2 MiB', () => {
    // 200,000 lines of one character, each made 70: 14 MB, which the hook must not build.
    writeFileSync(join(project, 'many.txt'), 'a\n'.repeat(200_000));
    const diff = fileEditDiff(
      'Edit',
      {
        file_path: join(project, 'many.txt'),
        old_string: 'a',
        new_string: 'b'.repeat(70),
        replace_all: true,
      },
      project,
    )!;
    expect(diff).toBe(
      '# many.txt: the edited file would be over 2 MiB; shown is the edit alone, its lines numbered from its own first line\n' +
        `--- a/many.txt\n+++ b/many.txt\n@@ -1 +1 @@\n-a\n+${'b'.repeat(70)}\n`,
    );
  });

  it('says the one reason an edit is shown alone, in plain words (review hc 12)', () => {
    const edit = (file: string, edits: Record<string, unknown>[]) =>
      fileEditDiff('MultiEdit', { file_path: join(project, file), edits }, project)!.split('\n')[0];
    const change = { old_string: 'a = 1', new_string: 'a = 2' };
    expect(edit('missing.txt', [change])).toBe(
      '# missing.txt: the file does not exist; shown is the edit alone, its lines numbered from its own first line',
    );
    expect(edit('notes.txt', [change, { old_string: 'z = 9', new_string: 'z = 0' }])).toBe(
      '# notes.txt: the text edit 2 replaces is not in the file; shown is the edit alone, its lines numbered from its own first line',
    );
    expect(
      fileEditDiff(
        'Edit',
        { file_path: join(project, 'notes.txt'), old_string: 'z', new_string: 'y' },
        project,
      )!.split('\n')[0],
    ).toBe(
      '# notes.txt: the text the edit replaces is not in the file; shown is the edit alone, its lines numbered from its own first line',
    );
    writeFileSync(join(project, 'latin1.txt'), Buffer.from([0x61, 0xe9, 0x0a]));
    expect(edit('latin1.txt', [change])).toBe(
      '# latin1.txt: the file is not UTF-8 text; shown is the edit alone, its lines numbered from its own first line',
    );
  });

  it('names a file outside the project by its whole path', () => {
    expect(fileEditDiff('Write', { file_path: '/etc/latch-none/x.conf', content: 'x\n' }, project)).toBe(
      '--- /dev/null\n+++ /etc/latch-none/x.conf\n@@ -0,0 +1 @@\n+x\n',
    );
  });

  it('never hangs on a FIFO put in a file’s place, and does not call it a new file', () => {
    expect(fileEditDiff('Write', { file_path: join(project, 'pipe'), content: 'x\n' }, project)).toBe(
      '# pipe: it is not a regular file; it would be replaced by this\n--- /dev/null\n+++ b/pipe\n@@ -0,0 +1 @@\n+x\n',
    );
  });

  it('reads nothing under /proc: a file that says it is empty and never ends, or a process’s root in another mount namespace (review rv6)', () => {
    // pagemap: 8 bytes for every page of this process's address space, hundreds of GiB. A root
    // leads where a FUSE mount this process's table does not list may hold the hook's thread.
    for (const path of ['/proc/self/pagemap', '/proc/1/root/etc/hostname', '/proc/self/cwd/x'])
      expect(fileEditDiff('Write', { file_path: path, content: 'x\n' }, project)).toMatch(
        new RegExp(
          `^# ${path}: it is on proc, whose files Latch does not read; it would be replaced by this\n`,
        ),
      );
  });

  it('says so when nothing changes', () => {
    expect(
      fileEditDiff(
        'Write',
        { file_path: join(project, 'notes.txt'), content: 'a = 1\nb = 1\nc = 1\n' },
        project,
      ),
    ).toBe('# notes.txt: no change\n');
  });

  it('is undefined for tools that edit no file, and for malformed edits', () => {
    expect(fileEditDiff('Bash', { command: 'ls' }, project)).toBeUndefined();
    expect(fileEditDiff('Read', { file_path: join(project, 'notes.txt') }, project)).toBeUndefined();
    expect(
      fileEditDiff('MultiEdit', { file_path: join(project, 'notes.txt'), edits: [{}] }, project),
    ).toBeUndefined();
  });
});
