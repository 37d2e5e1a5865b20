import { describe, expect, it } from 'vitest';
import type { Word } from '../../daemon/policy/commandWords.ts';
import { pathPattern, type PathSegment } from '../../daemon/policy/pathPattern.ts';
import { pathTouches } from '../../daemon/policy/pathTouches.ts';
import { protectedPlaces } from '../../daemon/policy/protectedPlaces.ts';
import { mayWrite } from '../../daemon/policy/wordsTouch.ts';

/** Unquoted shell text: its glob characters are live. */
const bare = (text: string): Word => [{ text, glob: true }];
const quoted = (text: string) => ({ text, glob: false });
const unquoted = (text: string) => ({ text, glob: true });
const computed = { computed: '$x' };

const named = (segment: PathSegment | undefined, name: string) =>
  typeof segment === 'string' ? segment === name : segment!.test(name);

describe('the paths a shell word can name', () => {
  it.each<[string, Word, 'root' | 'here' | 'computed']>([
    ['an absolute path', bare('/etc/x'), 'root'],
    ['a relative path', bare('etc/x'), 'here'],
    ['a quoted absolute path', [quoted('/etc'), unquoted('/x')], 'root'],
    ['a path that starts with a value', [computed, quoted('/x')], 'computed'],
    ['no word at all', [], 'computed'],
  ])('starts %s where it says', (_what, word, from) => {
    expect(pathPattern(word).from).toBe(from);
  });

  it('keeps literal segments as names, empty ones dropped', () => {
    expect(pathPattern(bare('/a//b/./c/')).segments).toEqual(['a', 'b', '.', 'c']);
    expect(pathPattern([quoted('/a/'), quoted('b*')]).segments).toEqual(['a', 'b*']);
  });

  it.each<[string, Word, string[], string[]]>([
    // A glob does not match a leading dot unless it spells one, as in the shell.
    ['*', bare('*'), ['build', ''], ['.latch']],
    ['.*', bare('.*'), ['.latch'], ['latch']],
    ['?atch', bare('?atch'), ['latch'], ['.atch', 'atch']],
    ['.lat?h', bare('.lat?h'), ['.latch', '.LATCH'], ['.lath', '.latcch']],
    ['[ch]at', bare('[ch]at'), ['cat', 'hat'], ['bat', '.at']],
    ['[!a]bc', bare('[!a]bc'), ['xbc'], ['abc']],
    ['[a!]x (a ! past the start is a character)', bare('[a!]x'), ['ax', '!x'], ['^x', 'bx']],
    ['[.a]x (a class does not match a leading dot)', bare('[.a]x'), ['ax'], ['.x']],
    ['ab]* (a ] with no [ is a character)', bare('ab]*'), ['ab]', 'ab]c'], ['b', 'a']],
    ['[^a]bc', bare('[^a]bc'), ['xbc'], ['abc']],
    ['[]a]x', bare('[]a]x'), [']x', 'ax'], ['bx']],
    ['[[]x', bare('[[]x'), ['[x'], ['x']],
    ['[\\]x', bare('[\\]x'), ['\\x'], [']x']],
    ['a[b*', bare('a[b*'), ['a[b', 'a[bc'], ['ab']],
    ['[]*', bare('[]*'), ['[]', '[]x'], ['x']],
    ['a.b*', bare('a.b*'), ['a.b', 'a.bc'], ['aXb']],
    ['{a} (no comma: no expansion)', bare('x{a}*'), ['x{a}', 'x{a}y'], ['xa', 'x{b}']],
    ['{a,b (no close)', bare('{a,b*'), ['{a,b', '{a,bc'], ['a']],
    // Braces expand before (braceExpansion.ts): what reaches a path is text.
    ['{a,b} (already expanded, text)', bare('{a,b}'), ['{a,b}'], ['a']],
    [
      '[[:alpha:]] (a POSIX class: any one character)',
      bare('.lat[[:alpha:]]h'),
      ['.latch', '.lat9h'],
      ['.lath'],
    ],
    ['x[[:digit:][:alpha:]]y', bare('x[[:digit:][:alpha:]]y'), ['x1y', 'xay'], ['xy', 'x1]y']],
    ['[[=a=]]b', bare('[[=a=]]b'), ['ab'], ['b', '.b']],
    [
      'tot$x.json (a value beside text may be any name)',
      [quoted('tot'), computed, quoted('.json')],
      ['totp.json', 'TOTP.JSON'],
      ['top.json'],
    ],
    ['$x.json (a value may start with a dot)', [computed, quoted('.json')], ['.x.json'], ['x.jsonx']],
    ['$x (a value alone is not guessed at)', [computed], [], ['', 'totp.json', '$x']],
    ['[z-a] (a class JavaScript cannot read may match anything)', bare('[z-a]'), ['q', '.x'], []],
  ])('%s matches its names and no others', (_glob, word, matched, unmatched) => {
    const [segment] = pathPattern(word).segments;
    for (const name of matched) expect(named(segment, name), name).toBe(true);
    for (const name of unmatched) expect(named(segment, name), name).toBe(false);
  });
});

describe('the protected places a path touches', () => {
  // A stand-in file system: /links/conf is a link to Latch's home; nothing else is a link.
  const realPath = (path: string) => path.replace(/^\/links\/conf(?=\/|$)/, '/nonexistent/ada/.latch');
  const touches = (word: Word, base?: string) =>
    pathTouches(pathPattern(word), base, protectedPlaces({ HOME: '/nonexistent/ada' }), realPath).map(
      ({ place, relation }) => `${place.kind} ${relation} ${place.target}`,
    );

  it.each<[string, Word, string | undefined, string[]]>([
    [
      'a secret',
      bare('/nonexistent/ada/.latch/totp.json'),
      undefined,
      ['home inside .latch', 'secret at totp.json'],
    ],
    [
      'a secret, in another case',
      bare('/NONEXISTENT/ada/.Latch/TOTP.json'),
      undefined,
      ['home inside .latch', 'secret at totp.json'],
    ],
    [
      'a secret by glob',
      bare('/nonexistent/ada/.lat*/t*'),
      undefined,
      ['secret at totp.json', 'home inside .latch'],
    ],
    [
      'a secret from the folder it runs in',
      bare('../.latch/host-token'),
      '/nonexistent/ada/p',
      ['home inside .latch', 'secret at host-token'],
    ],
    [
      'a secret through a link',
      bare('/links/conf/totp.json'),
      undefined,
      ['home inside .latch', 'secret at totp.json'],
    ],
    [
      'a secret by glob through a link',
      bare('/links/conf/h*-key.json'),
      undefined,
      ['home inside .latch', 'secret at host-key.json'],
    ],
    [
      'a folder above a secret, inside Latch’s home',
      bare('/nonexistent/ada/.latch/relay'),
      undefined,
      ['home inside .latch', 'secret above relay-secrets.json'],
    ],
    ['a folder that only starts like Latch’s', bare('/nonexistent/ada/.latch2/totp.json'), undefined, []],
    [
      'a secret, through a . in the path',
      bare('/nonexistent/ada/./.latch/totp.json'),
      undefined,
      ['home inside .latch', 'secret at totp.json'],
    ],
    [
      'a project’s hook settings, named alone',
      bare('.claude/settings.json'),
      undefined,
      ['hook-file at settings.json'],
    ],
    [
      'the socket’s folder',
      bare('/nonexistent/ada/.latch/run'),
      undefined,
      ['home inside .latch', 'socket at run'],
    ],
    [
      'Claude Code’s folder',
      bare('/nonexistent/ada/.claude'),
      undefined,
      ['agent-dir at .claude', 'hook-file above settings.json', 'hook-file above settings.local.json'],
    ],
    [
      'Codex’s hooks',
      bare('/nonexistent/ada/.codex/hooks.json'),
      undefined,
      ['agent-dir inside .codex', 'hook-file at hooks.json'],
    ],
    [
      'a project’s hook settings, anywhere',
      bare('app/.claude/settings.json'),
      undefined,
      ['hook-file at settings.json'],
    ],
    [
      'a project’s hook settings by glob',
      bare('app/.claude/sett*'),
      '/srv',
      ['hook-file at settings.json', 'hook-file at settings.local.json'],
    ],
    ['a project’s agent folder, by name', bare('app/.codex'), undefined, ['agent-dir at .codex']],
    ['no agent folder in a search pattern', bare('a .*'), undefined, []],
    [
      'hook settings after a value',
      [computed, quoted('/.claude/settings.local.json')],
      undefined,
      ['hook-file at settings.local.json'],
    ],
    // Wherever it starts, two names of a place's are that place (`${HOME%/}/.latch/…`, `~dev/.latch/…`).
    [
      'a secret after a value',
      [computed, quoted('/.latch/totp.json')],
      undefined,
      ['home inside .latch', 'secret at totp.json'],
    ],
    [
      'Latch’s home by its name, after a value',
      [computed, unquoted('/.lat?h/x')],
      undefined,
      ['home inside .latch'],
    ],
    ['no place after a value in a folder any name matches', [computed, unquoted('/.*/x')], undefined, []],
    ['no place for a file named like a hook file', bare('out/settings.json'), '/srv', []],
  ])('%s', (_what, word, base, expected) => {
    expect([...new Set(touches(word, base))].sort()).toEqual([...expected].sort());
  });
});

describe('what writing to a place means', () => {
  const place = (kind: 'secret' | 'home' | 'socket' | 'program' | 'agent-dir' | 'hook-file') => ({
    kind,
    parts: [],
    target: 't',
  });
  it.each([
    ['secret', 'at', 'secrets'],
    ['secret', 'inside', 'secrets'],
    ['secret', 'above', undefined],
    ['home', 'inside', 'files'],
    ['socket', 'at', 'files'],
    ['hook-file', 'at', 'hooks'],
    // A folder made where a hook file would be keeps the agent from its hooks.
    ['hook-file', 'inside', 'hooks'],
    ['agent-dir', 'at', 'hooks'],
    ['program', 'inside', 'files'],
    ['program', 'above', undefined],
  ] as const)('writing to a %s, %s it, is guarded as %s', (kind, relation, guard) => {
    expect(mayWrite({ place: place(kind), relation })).toBe(guard);
  });

  it.each([
    ['secret', 'files'],
    ['home', 'files'],
    ['program', 'files'],
    ['hook-file', 'hooks'],
  ] as const)('moving a folder above a %s is guarded as %s', (kind, guard) => {
    expect(mayWrite({ place: place(kind), relation: 'above', movable: true })).toBe(guard);
  });

  it('guards what is in an agent’s folder, a user’s or a project’s (plugins, subagents, skills, hook scripts)', () => {
    const user = { ...place('agent-dir'), path: '/home/ada/.claude' };
    expect(mayWrite({ place: user, relation: 'inside' })).toBe('hooks');
    expect(mayWrite({ place: place('agent-dir'), relation: 'inside' })).toBe('hooks');
  });
});

describe('a project’s agent folder', () => {
  const places = protectedPlaces({ HOME: '/nonexistent/ada' });
  // Each touch once: the path as written and as resolved are the same here.
  const touches = (path: string, spelt: 'by a command' | 'exactly') => [
    ...new Set(
      pathTouches(pathPattern(bare(path)), '/srv/p', places, (real) => real, spelt).map(
        ({ place, relation }) => `${place.kind} ${relation} ${place.target}`,
      ),
    ),
  ];

  it('is seen inside for the one file a file tool names, not for a command’s words', () => {
    expect(touches('.claude/agents/reviewer.md', 'exactly')).toEqual(['agent-dir inside .claude']);
    expect(touches('sub/.codex/prompts/x.md', 'exactly')).toEqual(['agent-dir inside .codex']);
    expect(touches('.claude/agents/reviewer.md', 'by a command')).toEqual([]);
    // Only a folder of that very name: not a file named like it, nor the folder's own last part.
    expect(touches('docs/.claude.md', 'exactly')).toEqual([]);
    expect(touches('.claude', 'exactly')).toEqual(['agent-dir at .claude']);
  });
});

describe('Latch’s own places, from the environment the daemon runs in', () => {
  it('follows $LATCH_HOME, $XDG_RUNTIME_DIR, $CLAUDE_CONFIG_DIR and $CODEX_HOME', () => {
    const env = {
      HOME: '/nonexistent/ada',
      LATCH_HOME: '/nonexistent/latch',
      XDG_RUNTIME_DIR: '/nonexistent/run/1000',
      CLAUDE_CONFIG_DIR: '/nonexistent/claude',
      CODEX_HOME: '/nonexistent/codex',
    };
    const places = protectedPlaces(env, 7);
    expect(places.variables).toEqual(env);
    expect(places.daemonPid).toBe(7);
    const kinds = (path: string) => [
      ...new Set(
        places.places.filter((place) => place.parts.join('/') === path.slice(1)).map((place) => place.kind),
      ),
    ];
    expect(kinds('/nonexistent/latch/totp.json')).toEqual(['secret']);
    expect(kinds('/nonexistent/latch/relay/relay-secrets.json')).toEqual(['secret']);
    expect(kinds('/nonexistent/latch')).toEqual(['home']);
    expect(kinds('/nonexistent/run/1000/latch')).toEqual(['socket']);
    expect(kinds('/nonexistent/claude')).toEqual(['agent-dir']);
    expect(kinds('/nonexistent/claude/settings.local.json')).toEqual(['hook-file']);
    expect(kinds('/nonexistent/codex/config.toml')).toEqual(['hook-file']);
    expect(protectedPlaces({ HOME: '/nonexistent/ada' }).variables).not.toHaveProperty('XDG_RUNTIME_DIR');
  });

  it('finds their names where they stand alone, in any case', () => {
    const { names } = protectedPlaces({ HOME: '/nonexistent/ada' });
    expect(names.secrets.test('cat TOTP.json')).toBe(true);
    expect(names.secrets.test('cat host-token')).toBe(true);
    expect(names.secrets.test('cat my-totp.json totp.json5 totpXjson')).toBe(false);
    expect(names.files.test('open(".latch")')).toBe(true);
    expect(names.files.test('rm daemon.sock')).toBe(true);
    expect(names.files.test('ls my.latch .latchrc latch')).toBe(false);
    expect(names.hooks.test('vi .codex/hooks.json')).toBe(true);
    expect(names.hooks.test('vi .claude/settings.local.json')).toBe(true);
    expect(names.hooks.test('vi .claude/settingsXjson .claude')).toBe(false);
  });
});
