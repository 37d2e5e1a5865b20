import { describe, expect, it } from 'vitest';
import {
  commandWords,
  literalText,
  mayBeProse,
  readAgain,
  wordText,
  type Word,
} from '../../daemon/policy/commandWords.ts';

/** A word as text: quoted text in '…', a computed value in {…}, unquoted text as it is. */
const spelt = (word: Word) =>
  word
    .map((piece) =>
      'computed' in piece ? `{${piece.computed}}` : piece.glob ? piece.text : `'${piece.text}'`,
    )
    .join('');
const read = (text: string) => commandWords(text, { HOME: '/h' }).map((command) => command.map(spelt));

// Self-protection finds Latch's names in the words a shell would run, however they are spelt:
// each case is a spelling an agent could use, read as bash, zsh and dash read it.
describe('the words of a command, as a shell reads them', () => {
  it.each<[string, string, string[][]]>([
    [
      'separators end a command',
      'cat a  b; ls -l && x | y\nz(w)',
      [['cat', 'a', 'b'], ['ls', '-l'], ['x'], ['y'], ['z'], ['w']],
    ],
    ['empty quotes join a word', "cat .la''tch", [['cat', ".la''tch"]]],
    ['a backslash quotes the next character', 'cat tot\\p', [['cat', "tot'p'"]]],
    ['a backslash-newline joins two lines', 'ca\\\nt x', [['cat', 'x']]],
    ['a final backslash quotes nothing', 'cat \\', [['cat', "''"]]],
    ['an unclosed quote runs to the end', "cat 'abc", [['cat', "'abc'"]]],
    [
      'a double-quoted string is read again, $HOME expanded',
      'echo "a $HOME b"',
      [
        ['a', '/h', 'b'],
        ['echo', "'a /h b'"],
      ],
    ],
    [
      'a backslash in double quotes escapes only $ ` " \\',
      'echo "x\\$y\\"z\\\\w\\q"',
      [["x{$y}'z\\w\\q'"], ['echo', "'x$y\"z\\w\\q'"]],
    ],
    [
      'a substitution in double quotes is a command',
      'echo "$(rm x)"',
      [['rm', 'x'], ['rm', 'x'], ['{$(…)}'], ['echo', '{$(…)}']],
    ],
    [
      'backticks, with escaped backticks inside',
      'echo `cat \\`x\\` \\$y`',
      [['x'], ['cat', '{`…`}', '{$y}'], ['echo', '{`…`}']],
    ],
    [
      '$( … ) is a command of its own',
      'cat $(cat x) y',
      [
        ['cat', 'x'],
        ['cat', '{$(…)}', 'y'],
      ],
    ],
    [
      '${NAME} is expanded, ${x:-…} read for its words',
      'cat ${HOME}/x ${x:-~/.latch}',
      // Unquoted, a value is globbed as the shell globs it: it reads as unquoted text.
      [['x:-~/.latch'], ['cat', '/h/x', '{${…}}']],
    ],
    [
      '$\'…\' is decoded, $"…" is a string',
      'cat $\'\\x2el\' $"x y"',
      [
        ['x', 'y'],
        ['cat', "'.l'", "'x y'"],
      ],
    ],
    ['a $ that starts no name is a $', 'cat $ $% a$', [['cat', "'$'", "'$'%", "a'$'"]]],
    ['unquoted $IFS splits words, quoted it does not', 'cat${IFS}x "$IFS"', [['cat', 'x', '{$IFS}']]],
    [
      'special parameters are values',
      'cat $1 $? $$ $@ $x_1',
      [['cat', '{$1}', '{$?}', '{$$}', '{$@}', '{$x_1}']],
    ],
    [
      '~ expands at a word’s start and after an assignment’s = or :; ~user and ~- may be any folder',
      'cat ~/x a~ ~ --dir=~/x PATH=~/bin:~/y ~user/x ~- ~+1/x ~+/x ~$U/x "~" x=a~',
      [
        [
          'cat',
          "'/h'/x",
          'a~',
          "'/h'",
          "--dir='/h'/x",
          "PATH='/h'/bin:'/h'/y",
          '{~user}/x',
          '{~-}',
          '{~+1}/x',
          '{~+}/x',
          '{~}{$U}/x',
          "'~'",
          'x=a~',
        ],
      ],
    ],
    [
      'a variable the command sets is known to its later words',
      'd=~/.latch; cat $d/t',
      [["d='/h'/.latch"], ['cat', '/h/.latch/t']],
    ],
    ['an assignment of a value is not known', 'b=$x; cat $b', [['b={$x}'], ['cat', '{$b}']]],
    [
      'a quoted string with shell syntax is read again',
      "echo 'a;b' 'ab'",
      [['a'], ['b'], ['echo', "'a;b'", "'ab'"]],
    ],
    [
      'parentheses inside $( … ) do not close it',
      'cat $(ls (x) y) z',
      [['ls'], ['x'], ['y'], ['cat', '{$(…)}', 'z']],
    ],
    [
      'a stray ) does not end the reading',
      'cat x) cat y',
      [
        ['cat', 'x'],
        ['cat', 'y'],
      ],
    ],
    [
      'backticks in double quotes are a command',
      'echo "a `cat x` b"',
      [
        ['cat', 'x'],
        ['cat', 'x'],
        ['a', '{`…`}', 'b'],
        ['echo', "'a '{`…`}' b'"],
      ],
    ],
    [
      'a backslash-newline in double quotes joins the lines',
      'echo "a\\\nb"',
      [['a'], ['b'], ['echo', "'ab'"]],
    ],
    ['an unclosed double quote ending in a backslash', 'echo "a\\', [['echo', "'a'"]]],
    [
      'unclosed backticks run to the end',
      'echo `cat x',
      [
        ['cat', 'x'],
        ['echo', '{`…`}'],
      ],
    ],
    ['a final backslash in backticks is kept', 'echo `a\\', [["a''"], ['echo', '{`…`}']]],
    ['~ at the end of the text', 'cd ~', [['cd', "'/h'"]]],
    ['~ after empty quotes is not at the word’s start', '""~/x', [['~/x']]],
    ['~ after a quoted = is no assignment’s', "'a='~/x", [["'a='~/x"]]],
    [
      'a string run again is read to its end, past a )',
      "sh -c 'x) cat ~/y'",
      [['x'], ['cat', "'/h'/y"], ['sh', '-c', "'x) cat ~/y'"]],
    ],
  ])('%s', (_rule, text, commands) => {
    expect(read(text)).toEqual(commands);
  });

  it('keeps quoted and unquoted text apart, since only unquoted globs are live', () => {
    expect(commandWords("a'*'*", {})).toEqual([
      [
        [
          { text: 'a', glob: true },
          { text: '*', glob: false },
          { text: '*', glob: true },
        ],
      ],
    ]);
  });

  it('reads nested substitutions 16 deep, then the rest as plain words, still searched', () => {
    // Each level is a shell running a string again; deeper, `$(` is a `$` and a parenthesis.
    const commands = read(`${'$('.repeat(20)}cat ~/.latch/totp.json${')'.repeat(20)}`);
    expect(commands).toContainEqual(['cat', "'/h'/.latch/totp.json"]);
    expect(commands.filter(([word]) => word === '{$(…)}')).toHaveLength(16);
    expect(commands.filter(([word]) => word === "'$'")).toHaveLength(4);
  });

  it('reads nested ${…} 16 deep, then keeps the rest as quoted text', () => {
    const commands = read(`echo ${'${a:-'.repeat(18)}x${'}'.repeat(18)}`);
    expect(commands).toHaveLength(17);
    expect(commands[0]).toEqual(["a:-{${…}}'a:-${a:-x}'"]);
    expect(commands.at(-1)).toEqual(['echo', '{${…}}']);
  });

  it('leaves ~ a value when the home is not known', () => {
    expect(commandWords('cat ~/x', {}).map((command) => command.map(spelt))).toEqual([['cat', '{~}/x']]);
  });

  it('gives the text of a word only when nothing in it is computed, and no name runs across a value', () => {
    expect(wordText([{ text: '.la', glob: true }, { computed: '$x' }, { text: 'tch', glob: false }])).toBe(
      '.la\0tch',
    );
    expect(
      literalText([
        { text: 'a', glob: true },
        { text: 'b', glob: false },
      ]),
    ).toBe('ab');
    expect(literalText([{ text: 'a', glob: true }, { computed: '$x' }])).toBeUndefined();
  });

  it('says which quoted texts it read again as commands, and that those may be prose', () => {
    const commands = commandWords(`bash -c 'npm test' $(make) x; git commit -m "run make"; sh -c make`, {});
    const texts = commands.map((command) => command.map((word) => literalText(word) ?? '?').join(' '));
    expect(texts).toEqual([
      'npm test',
      'make',
      'bash -c npm test ? x',
      'run make',
      'git commit -m run make',
      'sh -c make',
    ]);
    const [npmTest, make, bash, runMake, , shell] = commands;
    expect([npmTest, make, bash, runMake, shell].map((command) => mayBeProse(command!))).toEqual([
      true,
      false,
      false,
      true,
      false,
    ]);
    expect(readAgain(bash![2]!, 'npm test')).toBe(true);
    expect(readAgain(bash![2]!, 'npm')).toBe(false);
    // One word without spaces or the shell's syntax is no command to the lexer: sh's own reading says.
    expect(readAgain(shell![2]!, 'make')).toBe(false);
  });
});
