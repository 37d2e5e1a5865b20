import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanSimpleCommand } from '../../daemon/policy/scanSimpleCommand.ts';

describe('the simple-command scanner', () => {
  it.each([
    'ls',
    'ls -la src',
    'git log --oneline -20',
    // Separators inside quotes are words, not separators.
    'echo "a; rm -rf /"',
    "echo 'a && b | c > d'",
    "echo 'a\\'",
    'echo \\; rm -rf /',
    "git log --format='%h %s'",
    'echo "it\'s"',
    'echo "a \\" ; b"',
    // Expansions that only make words.
    'ls $HOME',
    'ls "$HOME/src" ${HOME}/x $1 "$@" $?',
    'ls ~/projects *.ts src/[ab]?.js {a,b}',
    'echo "\\$(not run)" \'$(not run)\' \\$\\(not run\\) "\\`not run\\`"',
    // ANSI-C quoting, with backslash escapes.
    "echo $'tab\\there ; fine \\\\'",
    'echo $"translated"',
    // A # inside a word is no comment.
    'echo a#b "x"#y',
    // Redirections that write no file.
    'ls 2>&1',
    'ls missing 2>/dev/null',
    'ls >/dev/null 2>&1',
    'ls > /dev/null',
    '  ls  ',
  ])('accepts %j', (command) => {
    expect(scanSimpleCommand(command)).toEqual({ simple: true });
  });

  it.each([
    ['', 'empty'],
    [' \t ', 'empty'],
    ['ls -la\nrm -rf /srv/important', 'newline'],
    ['ls \\\nrm -rf /', 'newline'],
    ["echo 'a\nb'", 'newline'],
    ['ls\r', 'control_character'],
    ['ls\u0000; rm -rf /', 'control_character'],
    ['ls\u001b[2K', 'control_character'],
    ['ls\u0085', 'control_character'],
    ['ls; rm -rf /', 'separator'],
    ['ls && rm -rf /', 'separator'],
    ['ls || rm -rf /', 'separator'],
    ['ls | sh', 'separator'],
    ['ls & rm -rf /', 'separator'],
    ['ls |& cat', 'separator'],
    ['ls &>/dev/null', 'separator'],
    ['ls $(rm -rf ~)', 'substitution'],
    ['ls "$(rm -rf ~)"', 'substitution'],
    ['ls `rm -rf ~`', 'substitution'],
    ['ls "`rm -rf ~`"', 'substitution'],
    ['echo $((1 + 2))', 'substitution'],
    ['echo $[1 + 2]', 'substitution'],
    ['cat <(rm -rf /)', 'substitution'],
    ['tee >(sh)', 'substitution'],
    ['(rm -rf /)', 'grouping'],
    ['ls (x)', 'grouping'],
    ['f() { rm -rf /', 'grouping'],
    ['a=(rm -rf)', 'grouping'],
    ['{ rm -rf /; }', 'separator'],
    ['ls > out.txt', 'redirection'],
    ['ls >> out.txt', 'redirection'],
    ['ls >| out.txt', 'redirection'],
    ['ls 2>&1x', 'redirection'],
    ['ls >/dev/nullx', 'redirection'],
    ['ls >&-', 'redirection'],
    ['cat < ~/.latch/totp.json', 'redirection'],
    ['cat <<EOF', 'redirection'],
    ['cat <<< "$x"', 'redirection'],
    ['ls <> file', 'redirection'],
    ['ls # ; rm', 'comment'],
    ["ls #'", 'comment'],
    ['echo ${x:-$(rm -rf /)}', 'parameter_operator'],
    ['echo "${x:-"; rm -rf /"}"', 'parameter_operator'],
    ['echo ${a[$(id)]}', 'parameter_operator'],
    ['echo ${#x}', 'parameter_operator'],
    ["echo 'unclosed", 'unclosed_quote'],
    ['echo "unclosed', 'unclosed_quote'],
    ["echo $'unclosed", 'unclosed_quote'],
    ["echo $'a\\\\' ; b'", 'separator'],
    ['ls \\', 'unclosed_quote'],
    // Review R2: a policy's pattern reads a tab inside a word, where the shell parts two.
    ['FOO=bar ls\t-la', 'tab'],
    ['date +%s\t-f\t/home/me/.ssh/id_ed25519', 'tab'],
  ])('rejects %j (%s)', (command, code) => {
    expect(scanSimpleCommand(command)).toEqual({ simple: false, code });
  });

  it('refuses a quote that bash and dash close at different places', () => {
    // bash reads $'\'' as one quote character and then runs echo INJECTED; dash ends the quote
    // at the escaped one. Either reading alone would let one shell run what the other calls quoted.
    expect(scanSimpleCommand("echo $'\\'' ; echo INJECTED ; echo '")).toEqual({
      simple: false,
      code: 'ambiguous_quote',
    });
    expect(scanSimpleCommand("echo $'it\\'s'")).toEqual({ simple: false, code: 'ambiguous_quote' });
  });

  it('does not take a quote inside a comment for a quote', () => {
    // bash runs the line after the comment even though the quote never closes.
    expect(scanSimpleCommand("ls # '\nrm -rf /\n'")).toEqual({ simple: false, code: 'newline' });
  });

  it('leaves no quote open in a command it accepts: a separator after it always counts', () => {
    // Pieces a command is made of, quoted and not; glued at random, most make a simple command.
    const piece = fc.oneof(
      fc.constantFrom(' ', 'ls', '-la', "'a; b'", '"a | b"', '"$x"', '\\;', "$'a\\tb'", '${x}'),
      fc.constantFrom('2>&1', '>/dev/null', 'a#b', '~/x', '*.ts', '"it\'s"', "'\"'", '$"t"'),
      fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', '\\', '$', '{', '}', '#', '='), maxLength: 4 }),
    );
    const command = fc.array(piece, { maxLength: 8 }).map((pieces) => `ls ${pieces.join('')}`);
    const separator = fc.constantFrom(';', '&&', '||', '|', '&', '\n', '$(', '`', '(', '>', '<');
    fc.assert(
      fc.property(
        command.filter((text) => scanSimpleCommand(text).simple),
        separator,
        fc.constantFrom('rm -rf /', ''),
        (simple, after, rest) => {
          expect(scanSimpleCommand(`${simple} ${after}${rest}`).simple).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
