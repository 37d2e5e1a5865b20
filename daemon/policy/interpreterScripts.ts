import { join } from 'node:path';
import { endsHereDocument, literalText, type SimpleCommand } from './commandWords.ts';
import { modulesLoaded, searchFolders } from './loadedCode.ts';
import { packageScripts } from './projectScripts.ts';
import {
  CHANGES_FOLDER,
  LOADS_CODE,
  looksLikeAFile,
  SHELL_CODE_OPTION,
  SHELL_OPTION_WITH_VALUE,
  SHELL_START_FILE,
  shellCodeRun,
  SHELLS,
  unreadScript,
  type Feeder,
  type Named,
} from './scriptNames.ts';

/**
 * The script a shell or an interpreter runs (`bash x.sh`, `python3 -m x`, `node -r ./y.js x.js`),
 * the code its options load first, or its input when it names none.
 */

/**
 * An interpreter's options after which its code is in the command itself, or it runs none: no
 * script file (a shell's: SHELL_CODE_OPTION).
 */
const INLINE = new Set(['-c', '-e', '-E', '-p', '--eval', '--print', '--version', '--help', '-V', '-h']);
/** Options after which an interpreter runs no code at all. */
const RUNS_NO_CODE = new Set(['--test', '--run', '--v8-options', '--completion-bash', '--check']);
/** An interpreter's own words before the file it runs (`deno run x.ts`, `bun test x.ts`, `tsx watch x.ts`). */
const RUNNING_SUBCOMMANDS: Record<string, ReadonlySet<string>> = {
  deno: new Set(['run', 'test', 'bench']),
  bun: new Set(['run', 'test']),
  tsx: new Set(['watch']),
};
/** An interpreter's options that take the next word as their value, which is no script. */
const OPTION_WITH_VALUE = new Set([
  ...[
    '-W',
    '-X',
    '--env-file',
    '--env-file-if-exists',
    '--config',
    '--import-map',
    '--lock',
    '--conditions',
    '--title',
  ],
  ...['--inspect-port', '--watch-path', '--input-type', '--disable-warning', '--tsconfig', '--project'],
  ...['--elide-lines', '--shell', '--tsconfig-override', '--define', '--port'],
]);
/**
 * A shell's or interpreter's script, the code its options load first, or its input when it
 * names none. `assigned`: the variables the command sets for it (`PYTHONPATH=lib`).
 */
export function interpreterScripts(
  name: string,
  words: SimpleCommand,
  expands: boolean,
  assigned: Readonly<Record<string, string>>,
  fed?: Feeder,
): Named[] {
  const args = words.map(literalText);
  if (name === 'pwsh' || name === 'powershell') return powershellScripts(args);
  if (name === 'bun' && args.some((word) => word !== undefined && CHANGES_FOLDER.test(word)))
    return [{ unread: 'its folder is one only running tells', shell: false, what: "bun's script" }];
  const shell = SHELLS.has(name);
  const python = /^(python|pypy)/.test(name);
  const named: Named[] = [...modulesLoaded(name, args, assigned)];
  // It runs files it finds, or none, rather than its input (`node --test`, `deno test`).
  let readsNoInput = false;
  let ranCommand = false;
  // bun's options that pick the project's packages its script runs in (`bun --filter web test`).
  const bunPicks: (string | undefined)[] = [];
  for (let next = 0; next < args.length; next++) {
    const word = args[next];
    if (name === 'bun' && word !== undefined && /^(-F|--filter)(=.*)?$/s.test(word)) {
      bunPicks.push(...(word.includes('=') ? [word] : [word, args[++next]]));
      continue;
    }
    // Its input is a here-document (`python3 - <<'EOF'`): the code is in the command's own text,
    // unless a shell expands what it holds first (`<<EOF` with a `$(cat x.sh)` in it).
    if (endsHereDocument(words[next]!)) {
      const quoted = words[next]!.some((piece) => 'text' in piece && !piece.glob);
      return quoted || !expands
        ? named
        : [
            ...named,
            { unread: 'its here-document holds what only running tells', shell, what: `${name}'s input` },
          ];
    }
    if (word === undefined) return [...named, unreadScript(name, shell)];
    // php's -r is its code; node's and ruby's name a module to load first. -v is a version, but
    // a shell's and Python's verbose mode.
    const inline =
      INLINE.has(word) ||
      (word === '-r' && name.startsWith('php')) ||
      (word === '-v' && !shell && !python) ||
      (/^(perl|ruby)/.test(name) && /^-[a-zA-Z]*[eE]$/.test(word)) ||
      (python && /^-[a-zA-Z]*c$/.test(word)) ||
      (/^node/.test(name) && /^-[a-zA-Z]*[ep]$/.test(word));
    // Its code is in the command, read as commands of its own, unless only running tells it:
    // `bash -c "$(curl …)"`.
    if (shell && SHELL_CODE_OPTION.test(word)) return [...named, ...shellCodeRun(name, words, fed)];
    if (shell ? word === '--version' || word === '--help' : inline)
      return next + 1 < args.length && args[next + 1] === undefined
        ? [...named, { unread: 'it runs code only running tells', shell, what: `${name}'s code` }]
        : named;
    if (!shell && RUNS_NO_CODE.has(word)) readsNoInput = true;
    const module = python ? (word === '-m' ? args[next + 1] : /^-m(.+)$/.exec(word)?.[1]) : undefined;
    if (python && (word === '-m' || module !== undefined)) {
      if (module === undefined)
        return word === '-m' && next + 1 < args.length ? [...named, unreadScript(name, false)] : named;
      const file = module.replaceAll('.', '/');
      const folders = ['', ...searchFolders(assigned['PYTHONPATH'])];
      return [
        ...named,
        ...folders.flatMap((folder) =>
          [`${file}.py`, `${file}/__main__.py`, `${file}/__init__.py`].map((path): Named => ({
            path: join(folder, path),
            shell: false,
            ifFound: true,
          })),
        ),
      ];
    }
    const loads = !shell
      ? LOADS_CODE.has(word)
        ? args[next + 1]
        : /^(?:--(?:require|import|loader|experimental-loader)=|-r(?=[./]))(.+)$/s.exec(word)?.[1]
      : SHELL_START_FILE.has(word)
        ? args[next + 1]
        : undefined;
    if (loads !== undefined && (shell || looksLikeAFile(loads))) named.push({ path: loads, shell });
    const envFile = /^(node|tsx|ts-node)/.test(name)
      ? /^--env-file(?:-if-exists)?$/.test(word)
        ? args[next + 1]
        : /^--env-file(?:-if-exists)?=(.+)$/s.exec(word)?.[1]
      : undefined;
    if (envFile !== undefined)
      named.push({ path: envFile, shell: false, ifFound: true, settings: 'environment' });
    if (
      LOADS_CODE.has(word) ||
      SHELL_START_FILE.has(word) ||
      (shell ? SHELL_OPTION_WITH_VALUE : OPTION_WITH_VALUE).has(word)
    )
      next++;
    else if (word === '-I' && !python) next++;
    else if (word.startsWith('-') || word.startsWith('+')) continue;
    // Its command is its first word: after it, or a filter, `test` is a script (`bun run test`).
    else if (
      !ranCommand &&
      RUNNING_SUBCOMMANDS[name]?.has(word) &&
      !(bunPicks.length > 0 && word === 'test')
    ) {
      readsNoInput = word !== 'run';
      ranCommand = true;
    }
    // deno's own commands (`deno fmt`) run what the project configures; bun's words are its
    // commands (`bun install`) or its package.json scripts (`bun run build`, `bun build`).
    else if (name === 'deno' && !word.includes('.') && !word.includes('/')) return named;
    else if (name === 'bun' && !word.includes('.') && !word.includes('/'))
      return [...named, ...(packageScripts(name, [...bunPicks, word]) ?? [])];
    // In the packages bun's filter picks, a file is looked for in each of their folders.
    else if (bunPicks.length > 0)
      return [...named, { unread: 'its folder is one only running tells', shell, what: word }];
    else return [...named, { path: word, shell }];
  }
  // No script named: it runs what its input holds (`cat x.sh | bash`, `curl … | python3 -`).
  if (readsNoInput) return named;
  return [
    ...named,
    {
      unread: 'it runs the code its input holds, which is not known before it runs',
      shell,
      what: `${name}'s input`,
    },
  ];
}

/**
 * PowerShell's script: the file `-File` names, or its first word that is no option. Its
 * parameters are matched by any start of their names, in any case (`-c`, `-Command`); an encoded
 * command is code no one reads, and one run in another folder (`-wd`) is said unread.
 */
function powershellScripts(args: (string | undefined)[]): Named[] {
  const is = (word: string, parameter: string, shortest: number) =>
    word.length > shortest && parameter.startsWith(word);
  for (let next = 0; next < args.length; next++) {
    const word = args[next]?.toLowerCase();
    if (word === undefined) return [unreadScript('pwsh', false)];
    if (is(word, '-command', 1))
      return args[next + 1] === undefined
        ? [{ unread: 'it runs code only running tells', shell: false, what: "pwsh's code" }]
        : [];
    if (is(word, '-encodedcommand', 1) || word === '-ec')
      return [{ unread: 'its code is encoded', shell: false, what: "pwsh's code" }];
    if (is(word, '-workingdirectory', 1) || word === '-wd')
      return [{ unread: 'its folder is one only running tells', shell: false, what: "pwsh's script" }];
    if (is(word, '-file', 1)) continue;
    if (
      /^-(ex|executionpolicy|settingsfile|configurationname|outputformat|of|inputformat|if|windowstyle|w|custompipename)/.test(
        word,
      )
    )
      next++;
    else if (!word.startsWith('-')) return [{ path: args[next]!, shell: false }];
  }
  return [
    {
      unread: 'it runs the code its input holds, which is not known before it runs',
      shell: false,
      what: "pwsh's input",
    },
  ];
}
