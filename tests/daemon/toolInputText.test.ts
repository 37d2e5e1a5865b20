import { describe, expect, it } from 'vitest';
import { MOST_INPUT_DEPTH, toolInputText } from '../../daemon/socket/toolInputText.ts';

function nested(depth: number): unknown {
  let value: unknown = 'x';
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

describe('toolInputText', () => {
  it('indents a small input for the phone', () => {
    expect(toolInputText({ target: 'prod', replicas: 3 })).toEqual({
      text: '{\n  "target": "prod",\n  "replicas": 3\n}',
    });
  });

  it('keeps a large input compact: indenting costs each line its depth', () => {
    const rows = Array.from({ length: 2000 }, (_, row) => ({ row, name: `row ${row}` }));
    const written = toolInputText({ rows });
    expect(written).toEqual({ text: JSON.stringify({ rows }) });
  });

  it(`takes ${MOST_INPUT_DEPTH} levels of nesting and refuses one more, before writing anything out`, () => {
    expect(toolInputText(nested(MOST_INPUT_DEPTH))).toHaveProperty('text');
    expect(toolInputText(nested(MOST_INPUT_DEPTH + 1))).toEqual({
      error: 'the tool input is nested more than 64 levels deep',
    });
    // 8 KB that would be 32 MB indented; and a depth JSON.stringify itself cannot walk.
    expect(toolInputText(nested(4000))).toHaveProperty('error');
    expect(toolInputText(nested(100_000))).toHaveProperty('error');
  });

  it('refuses what JSON cannot write: a BigInt, a function', () => {
    const cannot = { error: 'the tool input cannot be written as JSON' };
    expect(toolInputText({ rows: 10n })).toEqual(cannot);
    expect(toolInputText(() => 1)).toEqual(cannot);
  });
});
