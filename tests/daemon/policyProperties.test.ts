import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import { DEFAULT_POLICY } from '../../daemon/policy/defaultPolicy.ts';
import { evaluatePolicy, LONG_COMMAND_BYTES, parsePolicy } from '../../daemon/policy/policy.ts';

const policy = parsePolicy(DEFAULT_POLICY);
const verdict = (command: string, tool = 'Bash') => evaluatePolicy(policy, { tool, command, paths: [] });

const word = fc.stringMatching(/^[\w./~*?@%+=:,-]{1,12}$/);
const words = (...first: string[]) =>
  fc.array(fc.oneof(fc.constantFrom(...first), word), { maxLength: 5 }).map((list) => list.join(' '));

/** Commands the default policy allows: built read-only commands, and `ls` with any text at all. */
const allowedCommand = fc
  .oneof(
    words('-la', '-R', '*.ts', '~/src', '"my dir"', "'a; b'", '$HOME', '2>/dev/null').map((args) =>
      `ls ${args}`.trim(),
    ),
    fc.string({ maxLength: 30, unit: 'grapheme-ascii' }).map((text) => `ls ${text}`),
    words('--stat', '-p', '--oneline', '-20', 'HEAD~1', 'main..feature', '--', 'src/a.ts').chain((args) =>
      fc.constantFrom('status', 'diff', 'log', 'show').map((sub) => `git ${sub} ${args}`.trim()),
    ),
    fc.constantFrom('pwd', 'pwd -P', 'whoami', 'date', 'date -u +%s', "date '+%Y %m'", 'git branch -a'),
  )
  .filter((command) => verdict(command).action === 'allow');

const randomCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));

const path = fc.constantFrom('/', '~', '/srv/important', 'build', '"$HOME"', '*');

/** Destructive commands, with the prefixes that run them and the flag spellings rm takes. */
const destructiveCommand = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', 'sudo ', 'env ', 'nohup ', 'timeout 5 ', 'xargs ', 'command ', '/bin/', 'FOO=1 '),
      fc.constantFrom(
        '-rf',
        '-fr',
        '-r -f',
        '-R',
        '-f',
        '--recursive',
        '--force',
        '--recursive --force',
        '--force --recursive',
        '-rfv',
        '-v -r',
      ),
      path,
      fc.boolean(),
    )
    .map(([prefix, flags, target, flagsLast]) =>
      flagsLast ? `${prefix}rm ${target} ${flags}` : `${prefix}rm ${flags} ${target}`,
    ),
  fc.constantFrom(
    'git push --force origin main',
    'git push -f',
    'git push --force-with-lease',
    'git push origin +main',
    'git reset --hard HEAD~1',
    'git clean -fdx',
    'git branch -D main',
    'find . -delete',
    'find . -exec rm {} +',
    'truncate -s 0 app.db',
    'chmod -R 777 /',
    'dd if=/dev/zero of=/dev/sda',
    'mkfs.ext4 /dev/sdb1',
    'kubectl delete namespace prod',
    'terraform destroy',
  ),
  fc.constantFrom('drop table users', 'drop database prod', 'truncate table users').chain(randomCase),
);

const wrappedDestructive = fc.oneof(
  destructiveCommand,
  destructiveCommand.map((command) => `bash -c '${command.replaceAll("'", '"')}'`),
  destructiveCommand.map((command) => `sh -c "${command.replaceAll('"', "'")}"`),
);

/** Ways to run a second command after, or inside, a first one. */
const join = fc.constantFrom(
  (a: string, d: string) => `${a}\n${d}`,
  (a: string, d: string) => `${a}; ${d}`,
  (a: string, d: string) => `${a};${d}`,
  (a: string, d: string) => `${a} && ${d}`,
  (a: string, d: string) => `${a} || ${d}`,
  (a: string, d: string) => `${a} | ${d}`,
  (a: string, d: string) => `${a} & ${d}`,
  (a: string, d: string) => `${a} $(${d})`,
  (a: string, d: string) => `${a} \`${d}\``,
  (a: string, d: string) => `${a} (${d})`,
  (a: string, d: string) => `${a} "$(${d})"`,
);

describe('the default policy, for any command', () => {
  it('never allows an allowed command followed by, or holding, a destructive one', () => {
    fc.assert(
      fc.property(allowedCommand, join, wrappedDestructive, (a, joined, d) => {
        expect(verdict(joined(a, d))).toMatchObject({
          action: 'ask',
          risk: 'high',
          rule: 'destructive shell commands',
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('asks for every destructive command at high risk, alone', () => {
    fc.assert(
      fc.property(wrappedDestructive, (d) => {
        expect(verdict(d)).toMatchObject({ action: 'ask', risk: 'high' });
      }),
      { numRuns: 500 },
    );
  });
});

describe('a command longer than a phone shows', () => {
  const permissive = parsePolicy('default = "allow"\n[[rule]]\ntool = "*"\naction = "allow"\n');
  const denying = parsePolicy(
    'default = "allow"\n[[rule]]\ncommand = "*"\naction = "allow"\n[[rule]]\ncommand_regex = "rm -rf"\naction = "deny"\n',
  );
  const longCommand = fc
    .tuple(
      fc.oneof(allowedCommand, fc.string({ unit: 'binary', maxLength: 40 })),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
      fc.nat({ max: 4000 }),
    )
    .map(([start, filler, more]) => {
      const missingBytes = LONG_COMMAND_BYTES + more + 1 - utf8Length(start);
      return start + filler.repeat(Math.max(0, Math.ceil(missingBytes / utf8Length(filler))));
    });

  it('is never allowed, by any rule of any policy: it is asked at critical risk', () => {
    fc.assert(
      fc.property(longCommand, fc.constantFrom(policy, permissive), (command, anyPolicy) => {
        expect(evaluatePolicy(anyPolicy, { tool: 'Bash', command, paths: [] })).toMatchObject({
          action: 'ask',
          risk: 'critical',
          rule: `command over ${LONG_COMMAND_BYTES} bytes, more than a phone shows`,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('is still denied by a deny rule that matches it, even one after an allow rule', () => {
    fc.assert(
      fc.property(longCommand, (command) => {
        const long = `${command}; rm -rf /`;
        expect(evaluatePolicy(denying, { tool: 'Bash', command: long, paths: [] }).action).toBe('deny');
      }),
      { numRuns: 100 },
    );
  });
});
