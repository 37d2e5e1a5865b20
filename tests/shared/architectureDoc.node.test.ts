import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// docs/architecture.md is a map of the code: every file and folder it names in backticks must exist.
const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/architecture.md', root), 'utf8');
const namedPaths = [
  ...new Set([...doc.matchAll(/`((?:[\w.-]+\/)+(?:[\w.-]+\.tsx?)?)`/g)].map((match) => match[1]!)),
];

describe('docs/architecture.md', () => {
  it('names files and folders', () => {
    expect(namedPaths.length).toBeGreaterThan(20);
  });

  it.each(namedPaths)('names %s, which exists', (path) => {
    expect(existsSync(new URL(path, root))).toBe(true);
  });
});
