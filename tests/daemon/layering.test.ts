import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Arrows point down only: the CLI sits on top of the daemon's modules and nothing below it
// reaches back up; the build scripts never depend on the tests.
const root = resolve(import.meta.dirname, '../..');

/** Every module a file names: static imports and re-exports, side-effect imports, import(). */
function importedPaths(source: string): string[] {
  const specifier = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;
  return [...source.matchAll(specifier)].map((match) => match[1]!);
}

/** The files under `folder` that import something under `forbidden`, as `file -> import` lines. */
function importsInto(folder: string, forbidden: string, except?: string): string[] {
  const files = readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(folder, file))
    .filter((file) => except === undefined || !file.startsWith(`${except}/`));
  return files.flatMap((file) =>
    importedPaths(readFileSync(join(root, file), 'utf8'))
      .filter((path) => path.startsWith('.'))
      .filter((path) => relative(root, resolve(root, dirname(file), path)).startsWith(`${forbidden}/`))
      .map((path) => `${file} -> ${path}`),
  );
}

describe('layering', () => {
  it('finds every form of import it must police', () => {
    const source = [
      "import { a } from '../cli/a.ts';",
      "import type { B } from './b.ts';",
      "export { c } from '../c.ts';",
      "import '../d.ts';",
      "const e = await import('./e.ts');",
    ].join('\n');
    expect(importedPaths(source)).toEqual(['../cli/a.ts', './b.ts', '../c.ts', '../d.ts', './e.ts']);
  });

  it('keeps every daemon module outside daemon/cli/ from importing daemon/cli/', () => {
    expect(importsInto('daemon', 'daemon/cli', 'daemon/cli')).toEqual([]);
  });

  it('sees an import of daemon/cli/ where one exists', () => {
    // The check above can fail: the CLI's commands import the rest of the CLI.
    expect(importsInto('daemon/cli/commands', 'daemon/cli')).not.toEqual([]);
  });

  it('keeps scripts/ from importing tests/', () => {
    expect(importsInto('scripts', 'tests')).toEqual([]);
  });
});
