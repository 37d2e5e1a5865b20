import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { tomlKeyLine } from '../../daemon/config/tomlKeyLine.ts';

describe('finding the line that sets a TOML key', () => {
  it.each([
    [
      'a key under its table',
      '[relay]\nurl = "x"\n\n[kill_switch]\nquorum = 1\nquroum = 2\n',
      ['kill_switch', 'quroum'],
      6,
    ],
    ['an unknown table, at its header', '[relay]\nurl = "x"\n[kill_swich]\nquorum = 1\n', ['kill_swich'], 3],
    ['a table first named by a sub-table', '[kill_swich.extra]\nx = 1\n', ['kill_swich'], 1],
    ['a dotted key at the top', 'relay.url = "x"\nkill_switch.quroum = 1\n', ['kill_switch', 'quroum'], 2],
    ['a dotted key under a table', '[kill_switch]\nextra.depth = 1\n', ['kill_switch', 'extra'], 2],
    [
      'quoted keys, and spaces around the dots',
      '[ "kill_switch" ]\n\'quroum\' = 1\n',
      ['kill_switch', 'quroum'],
      2,
    ],
    ['a basic-string key with an escape', '"qu\\u0072oum" = 1\n', ['quroum'], 1],
    ['an inline table that holds it', 'kill_switch = { quroum = 1 }\n', ['kill_switch', 'quroum'], 1],
    [
      'an array of tables',
      '[[rule]]\ntool = "a"\naction = "ask"\n[[rule]]\nactoin = "ask"\n',
      ['rule', 'actoin'],
      5,
    ],
    [
      'a comment and indentation',
      '# quroum = 1\n[kill_switch] # the switch\n  quroum = 1\n',
      ['kill_switch', 'quroum'],
      3,
    ],
  ])('finds %s', (_what, text, key, line) => {
    parse(text); // each is valid TOML: the helper is for texts that parsed
    expect(tomlKeyLine(text, key)).toBe(line);
  });

  it('reads nothing into the lines of a multi-line string or array', () => {
    const text = [
      'note = """',
      '[kill_switch]',
      'quroum = 1',
      '"""',
      'list = [',
      '  "quroum = 1",',
      '  [1, 2],',
      ']',
      'quroum = 2',
    ].join('\n');
    parse(text);
    expect(tomlKeyLine(text, ['quroum'])).toBe(9);
    expect(tomlKeyLine(text, ['kill_switch', 'quroum'])).toBeUndefined();
  });

  it('says undefined for a key no line sets', () => {
    expect(tomlKeyLine('[relay]\nurl = "x"\n', ['kill_switch', 'quroum'])).toBeUndefined();
  });
});
