import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  mayRunOtherCode,
  MOST_SCRIPT_BYTES,
  patchedFiles,
  scriptsRun,
} from '../../daemon/policy/scriptsRun.ts';

let project: string;
const CHANGE = '--- a/.claude/settings.json\n+++ b/.claude/settings.json\n@@ -1 +1 @@\n-{}\n+{"hooks": {}}\n';
const variables = () => ({ HOME: join(project, 'home') });

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'latch-scripts-'));
  mkdirSync(join(project, 'tools'));
  mkdirSync(join(project, 'home'));
  writeFileSync(join(project, 'deploy.sh'), 'echo deploying\n');
  writeFileSync(join(project, 'tools/x.py'), "open('../.bashrc', 'a')\n");
  writeFileSync(join(project, 'home/env.sh'), 'export A=1\n');
  writeFileSync(join(project, 'run-me'), '#!/usr/bin/env python3\nprint(1)\n');
  writeFileSync(join(project, 'plain'), 'echo no shebang\n');
  writeFileSync(join(project, 'big.sh'), 'x'.repeat(MOST_SCRIPT_BYTES + 1));
  writeFileSync(join(project, 'change.diff'), CHANGE);
  symlinkSync('/dev/fd/19', join(project, 'fd-link'));
  symlinkSync('/proc/self/fd', join(project, 'fds'));
  copyFileSync(process.execPath, join(project, 'a-binary'));
  execFileSync('mkfifo', [join(project, 'pipe.sh')]);
  for (const file of ['run-me', 'plain', 'a-binary']) chmodSync(join(project, file), 0o755);
});

afterAll(() => rmSync(project, { recursive: true, force: true }));

const run = (command: string) =>
  scriptsRun(command, project, variables()).map(({ path, ...read }) => ({
    ...read,
    path: path.replace(project, 'P'),
  }));

describe('the scripts a command runs', () => {
  it('reads no code that says it is in an encoding other than UTF-8: it is not what runs', () => {
    const hidden = '# -*- coding: utf-7 -*-\n#+AAo-import os+ADs-os.system(+ACI-id+ACI-)\nprint(1)\n';
    writeFileSync(join(project, 'enc7.py'), hidden);
    writeFileSync(
      join(project, 'escape.py'),
      '#!/usr/bin/env python3\n# coding=unicode_escape\n# \\u000aprint(2)\n',
    );
    writeFileSync(join(project, 'utf8.py'), '# -*- coding: UTF_8 -*-\nprint(3)\n');
    expect(run('python3 enc7.py')).toEqual([
      {
        path: 'P/enc7.py',
        unread: 'it says it is in the encoding utf-7, which Latch does not read',
        shell: false,
      },
    ]);
    expect(run('python3 escape.py')[0]).toMatchObject({ unread: expect.stringContaining('unicode_escape') });
    // Lines that end in a lone CR, which Python reads as line ends too.
    writeFileSync(join(project, 'cr.py'), '#!/usr/bin/env python3\r# coding: utf-7\r#+AAo-print(4)\r');
    expect(run('python3 cr.py')[0]).toMatchObject({ unread: expect.stringContaining('utf-7') });
    expect(run('python3 utf8.py')).toEqual([
      { path: 'P/utf8.py', text: '# -*- coding: UTF_8 -*-\nprint(3)\n', shell: false },
    ]);
  });

  it.each([
    'bash deploy.sh',
    'sh -e deploy.sh',
    'bash -o pipefail deploy.sh arg',
    'zsh ./deploy.sh',
    '. ./deploy.sh',
    'source deploy.sh',
    'sudo -E bash deploy.sh',
    'env A=1 bash deploy.sh',
    'A=1 nohup bash deploy.sh &',
    'cd /tmp && bash P/deploy.sh',
    'git status; bash "deploy.sh"',
    // Wrappers and runners put the shell anywhere after them.
    'timeout 60 bash deploy.sh',
    'flock /tmp/lock bash deploy.sh',
    // A wrapper's option values, whatever they look like, do not hide the shell after them.
    'flock build.lock bash deploy.sh',
    'timeout --signal KILL 5 bash deploy.sh',
    'setsid -f nice -n 5 bash deploy.sh',
    'xargs -a /dev/null bash deploy.sh',
    'uv run deploy.sh',
    // bash reads this one first, whatever -c holds.
    'BASH_ENV=./deploy.sh bash -c true',
    'env BASH_ENV=deploy.sh bash -c true',
    'sudo -u me bash deploy.sh',
    'csh deploy.sh',
    // Inside a compound command (review I).
    'if true; then bash deploy.sh; fi',
    '{ bash deploy.sh; }',
    '! bash deploy.sh',
    'while bash deploy.sh; do :; done',
    'tcsh -f deploy.sh',
    'exec -a name bash deploy.sh',
    'find . -name x -exec bash deploy.sh {} \\;',
    // Where `cd` leads.
    'cd tools && bash ../deploy.sh',
    'cd /tmp; cd P/tools && bash ../deploy.sh',
    'flock /tmp/lock ./deploy.sh',
    'strace -o /tmp/trace ./deploy.sh',
    '. ./deploy.sh',
    // What only looks at the script writes nothing of it.
    'chmod +x deploy.sh && bash deploy.sh',
    'cat deploy.sh; bash deploy.sh > out.log',
  ])('finds the shell script in `%s`', (command) => {
    expect(run(command.replace('P/', `${project}/`))).toEqual([
      { path: 'P/deploy.sh', text: 'echo deploying\n', shell: true },
    ]);
  });

  it.each([
    ['python3 tools/x.py --flag', 'P/tools/x.py'],
    ['python3 -u tools/x.py', 'P/tools/x.py'],
    ['node tools/x.py', 'P/tools/x.py'],
    ['deno run tools/x.py', 'P/tools/x.py'],
    // An option's value is not the script.
    ['python3 -W ignore tools/x.py', 'P/tools/x.py'],
    ['node --import tsx tools/x.py', 'P/tools/x.py'],
    ['node -r dotenv/config tools/x.py', 'P/tools/x.py'],
    ['npx tsx tools/x.py', 'P/tools/x.py'],
    ['poetry run python tools/x.py', 'P/tools/x.py'],
    // Code loaded first, by an option or by Node's options, or run as a module of the folder.
    ['node -r ./tools/x.py -e 0', 'P/tools/x.py'],
    ['node --import ./tools/x.py -e 0', 'P/tools/x.py'],
    ['NODE_OPTIONS="--require ./tools/x.py" node -e 0', 'P/tools/x.py'],
    ['python3 -m tools.x', 'P/tools/x.py'],
    // A program's code in a file an option names, or a file after `<`.
    ['awk -f tools/x.py input.txt', 'P/tools/x.py'],
    ['sed -n -f tools/x.py README.md', 'P/tools/x.py'],
    ['vim -es -S tools/x.py', 'P/tools/x.py'],
    ['sqlite3 /tmp/x.db ".read tools/x.py"', 'P/tools/x.py'],
    ['sqlite3 /tmp/x.db < tools/x.py', 'P/tools/x.py'],
    ['node --require=./tools/x.py -e 0', 'P/tools/x.py'],
    ['python3 -mtools.x', 'P/tools/x.py'],
    ['python3 -I tools/x.py', 'P/tools/x.py'],
    ['deno run -A tools/x.py', 'P/tools/x.py'],
    ['npm exec -- tsx tools/x.py', 'P/tools/x.py'],
    ['gawk -i tools/x.py "BEGIN{}"', 'P/tools/x.py'],
    ['awk -E tools/x.py', 'P/tools/x.py'],
    ['uv run --with requests python tools/x.py', 'P/tools/x.py'],
    ['node --test tools/x.py', 'P/tools/x.py'],
    ['deno test -A tools/x.py', 'P/tools/x.py'],
    ['tsx watch tools/x.py', 'P/tools/x.py'],
    ['node --conditions development tools/x.py', 'P/tools/x.py'],
    ['deno run --config deno.json tools/x.py', 'P/tools/x.py'],
    ['sed -nf tools/x.py README.md', 'P/tools/x.py'],
    ['ruby -r./tools/x.py -e 1', 'P/tools/x.py'],
    ['gdb -batch -x tools/x.py', 'P/tools/x.py'],
    ['psql -f tools/x.py', 'P/tools/x.py'],
    ['runuser -u me -- python3 tools/x.py', 'P/tools/x.py'],
    ['pwsh tools/x.py', 'P/tools/x.py'],
    ['pwsh -NoProfile -ExecutionPolicy Bypass -File tools/x.py', 'P/tools/x.py'],
    ['powershell -f tools/x.py -Name x', 'P/tools/x.py'],
  ])('finds the code another language runs in `%s`', (command, path) => {
    expect(run(command)).toEqual([{ path, text: "open('../.bashrc', 'a')\n", shell: false }]);
  });

  it('reads a folder the shell expands, from its variables', () => {
    expect(run('bash ~/env.sh')).toEqual([{ path: 'P/home/env.sh', text: 'export A=1\n', shell: true }]);
  });

  it('takes a program run by its path as a script only when it is text: by its #! line, or a shell', () => {
    expect(run('./run-me')).toEqual([
      { path: 'P/run-me', text: '#!/usr/bin/env python3\nprint(1)\n', shell: false },
    ]);
    expect(run('./plain')).toEqual([{ path: 'P/plain', text: 'echo no shebang\n', shell: true }]);
    expect(run('./a-binary --version')).toEqual([]);
    expect(run('./missing')).toEqual([]);
  });

  it.each([
    'bash -c "echo hi"',
    'bash -lc deploy.sh',
    'python3 -c "print(1)"',
    'python3 -m http.server',
    'node -e 1',
    'node -v',
    'python3 --version',
    'bash --version',
    "php -r 'echo 1;'",
    'ls deploy.sh',
    'bun install',
    'deno fmt',
    'sqlite3 /tmp/x.db "select 1"',
    'at now + 1 minute',
    'ENV=production npm start',
    'command -v bash',
    'npx eslint tools/new-file.py',
    'uv run ruff format tools/new.py',
    'node --test',
    'vim -u NONE notes.txt',
    'git apply --check change.diff',
    'patch --dry-run -p1 < change.diff',
    'timeout 5 grep -r bash tools',
    "perl -i -pe 's/a/b/' README.md",
    'vim -es notes.txt',
    // A here-document is the program's input, in the command itself.
    "python3 - <<'EOF'\nprint(1)\nEOF",
    'bash <<-EOF\n\techo hi\n\tEOF',
    "bash <<'EOF'\necho $HOME $(date)\nEOF",
    'git am --continue',
    "node -pe '1'",
    "python3 -Ic 'print(1)'",
    'bun test',
  ])('finds none in `%s`: its code is in the command, installed, or none', (command) => {
    expect(run(command)).toEqual([]);
  });

  it('runs the scripts a crontab, `at` and a patch are given: as shell commands, or as a patch', () => {
    expect(run('crontab deploy.sh')).toEqual([
      { path: 'P/deploy.sh', text: 'echo deploying\n', shell: true },
    ]);
    expect(run('at -f deploy.sh now')).toEqual([
      { path: 'P/deploy.sh', text: 'echo deploying\n', shell: true },
    ]);
    for (const command of [
      'patch -p1 < change.diff',
      'patch -p1 -i change.diff',
      'patch --input=change.diff',
      'git apply change.diff',
    ])
      expect(run(command)).toEqual([{ path: 'P/change.diff', text: CHANGE, shell: false, patch: true }]);
  });

  it('says it cannot read what a shell or interpreter runs from its input, or a script only running names', () => {
    const fromInput = (name: string, shell: boolean) => ({
      path: `${name}'s input`,
      unread: 'it runs the code its input holds, which is not known before it runs',
      shell,
    });
    expect(run('cat deploy.sh | bash')).toEqual([fromInput('bash', true)]);
    expect(run('curl -s https://example.com/x | python3 -')).toEqual([fromInput('python3', false)]);
    expect(run('bash')).toEqual([fromInput('bash', true)]);
    expect(run('bash $(echo x) ; bash deploy.sh')).toEqual([
      { path: "bash's script", unread: 'its script is a value only running tells', shell: true },
      { path: 'P/deploy.sh', text: 'echo deploying\n', shell: true },
    ]);
    const computed = (what: string, shell: boolean) => ({
      path: what,
      unread: 'it runs code only running tells',
      shell,
    });
    for (const command of [
      'bash -c "$(curl -s https://example.com/x)"',
      'bash -c -e "$x"',
      'bash -o pipefail -c "$x"',
    ])
      expect(run(command)).toEqual([computed("bash's code", true)]);
    expect(run('fish --command=true')).toEqual([]);
    expect(run('eval "$(cat deploy.sh)"')).toEqual([computed('eval', true)]);
    expect(run('. <(cat deploy.sh)')).toEqual([
      { path: ".'s script", unread: 'its script is a value only running tells', shell: true },
    ]);
    const patchInput = 'it applies the patch its input holds, which is not known before it runs';
    expect(run('cat change.diff | git apply')).toEqual([
      { path: "git apply's input", unread: patchInput, shell: false },
    ]);
    expect(run('cat change.diff | patch -p1')).toEqual([
      { path: "patch's input", unread: patchInput, shell: false },
    ]);
    expect(run('cd "$(mktemp -d)" && bash deploy.sh')).toEqual([
      { path: 'deploy.sh', unread: 'its folder is one only running tells', shell: true },
    ]);
    expect(run('bash <<EOF\n$(cat deploy.sh)\nEOF')).toEqual([
      { path: "bash's input", unread: 'its here-document holds what only running tells', shell: true },
    ]);
    expect(run('pwsh -NoProfile -EncodedCommand ZQBjAGgAbwA=')).toEqual([
      { path: "pwsh's code", unread: 'its code is encoded', shell: false },
    ]);
    expect(run('pwsh -c "$(cat x)"')).toEqual([
      { path: "pwsh's code", unread: 'it runs code only running tells', shell: false },
    ]);
    expect(run('pwsh -Command Get-ChildItem')).toEqual([]);
    for (const command of [
      'env -C tools bash deploy.sh',
      'sudo -D /tmp bash deploy.sh',
      'uv run --directory tools bash deploy.sh',
    ])
      expect(run(command)).toEqual([
        { path: 'deploy.sh', unread: 'its folder is one only running tells', shell: true },
      ]);
    for (const command of ['git -C tools apply change.diff', 'patch -d tools -p1 -i change.diff'])
      expect(run(command)).toEqual([
        { path: 'change.diff', unread: 'its folder is one only running tells', shell: false },
      ]);
    expect(run('LD_PRELOAD=./x.so ls')).toEqual([
      { path: 'LD_PRELOAD', unread: 'LD_PRELOAD loads code into the program that runs', shell: false },
    ]);
  });

  it('reads the modules a search path the command sets makes an interpreter load', () => {
    mkdirSync(join(project, 'lib/Tools'), { recursive: true });
    writeFileSync(join(project, 'lib/sitecustomize.py'), 'import os\n');
    writeFileSync(join(project, 'lib/Tools/Setup.pm'), 'package Tools::Setup; 1;\n');
    writeFileSync(join(project, 'lib/setup.rb'), 'puts 1\n');
    const site = { path: 'P/lib/sitecustomize.py', text: 'import os\n', shell: false };
    // Python imports sitecustomize at its start, whatever it runs: inline code, or a program.
    for (const command of [
      'PYTHONPATH=lib python3 -c 1',
      'PYTHONPATH=/nowhere:lib pytest',
      'env PYTHONPATH=lib tox',
    ])
      expect(run(command)).toEqual([site]);
    expect(run('PYTHONPATH=lib python3 -m tools.x')).toEqual([
      site,
      { path: 'P/tools/x.py', text: "open('../.bashrc', 'a')\n", shell: false },
    ]);
    const perl = { path: 'P/lib/Tools/Setup.pm', text: 'package Tools::Setup; 1;\n', shell: false };
    for (const command of [
      'perl -Ilib -MTools::Setup -e 1',
      'perl -I lib -mTools::Setup -e 1',
      'PERL5LIB=lib perl -MTools::Setup=x -e 1',
    ])
      expect(run(command)).toEqual([perl]);
    const ruby = { path: 'P/lib/setup.rb', text: 'puts 1\n', shell: false };
    for (const command of ['ruby -Ilib -rsetup -e 1', 'RUBYLIB=lib ruby -r setup -e 1'])
      expect(run(command)).toEqual([ruby]);
    // A module of no folder the command names is the system's.
    expect(run('perl -MTools::Setup -e 1')).toEqual([]);
    // Folders `use lib` adds, a debugger module, a module named with its extension (review H).
    expect(run('perl -Mlib=lib -MTools::Setup -e 1')).toEqual([perl]);
    // A search path an earlier part of the command exported, or set alone (review H).
    expect(run('export PERL5LIB=lib; perl -MTools::Setup -e 1')).toEqual([perl]);
    expect(run('RUBYLIB=lib && ruby -rsetup -e 1')).toEqual([ruby]);
    mkdirSync(join(project, 'lib/Devel'), { recursive: true });
    writeFileSync(join(project, 'lib/Devel/Trace.pm'), 'package Devel::Trace; 1;\n');
    expect(run('perl -Ilib -d:Trace -e 1')).toEqual([
      { path: 'P/lib/Devel/Trace.pm', text: 'package Devel::Trace; 1;\n', shell: false },
    ]);
    expect(run('ruby -Ilib -rsetup.rb -e 1')).toEqual([ruby]);
    // $PWD is where the command runs; a search path only running tells is said unread.
    expect(run('PYTHONPATH=$PWD/lib python3 -c 1')).toEqual([site]);
    // Added to what the session already has: what it adds is read (review I).
    expect(run('PYTHONPATH=lib:$PYTHONPATH python3 -c 1')).toEqual([site]);
    expect(run('NODE_OPTIONS="$NODE_OPTIONS --max-old-space-size=4096" node -e 0')).toEqual([]);
    expect(run('PYTHONPATH="$(pwd)/lib" python3 -c 1')).toEqual([
      { path: 'PYTHONPATH', unread: 'PYTHONPATH is set to what only running tells', shell: false },
    ]);
    expect(run('LD_PRELOAD=$(pwd)/x.so ls')).toEqual([
      { path: 'LD_PRELOAD', unread: 'LD_PRELOAD is set to what only running tells', shell: false },
    ]);
    expect(run('PYTHONUSERBASE=u python3 -c 1')).toEqual([
      {
        path: 'PYTHONUSERBASE',
        unread: 'PYTHONUSERBASE loads code into the program that runs',
        shell: false,
      },
    ]);
  });

  it("says it cannot read the code Node's environment file loads, and never shows the file", () => {
    writeFileSync(join(project, '.env'), 'API_KEY=k-123\nNODE_OPTIONS=--require ./x.js\n');
    writeFileSync(join(project, 'plain.env'), 'API_KEY=k-123\n');
    const loads = {
      path: 'P/.env',
      unread: 'it sets NODE_OPTIONS, whose code Latch does not read',
      shell: false,
    };
    for (const command of [
      'npx tsx --env-file=.env -e 0',
      'node --env-file=.env -e 0',
      'node --env-file .env -e 0',
      'node --env-file-if-exists=.env -e 0',
    ])
      expect(run(command)).toEqual([loads]);
    for (const command of ['node --env-file=plain.env -e 0', 'node --env-file-if-exists=missing.env -e 0'])
      expect(run(command)).toEqual([]);
  });

  it('reads the program a variable or a git setting names by its path, and zsh’s start-up folder', () => {
    const deploy = { path: 'P/deploy.sh', text: 'echo deploying\n', shell: true };
    for (const command of [
      'git -c core.fsmonitor=./deploy.sh status',
      "git -c 'alias.x=!./deploy.sh' x",
      'GIT_EXTERNAL_DIFF=./deploy.sh git diff',
      'EDITOR="./deploy.sh --wait" git commit',
    ])
      expect(run(command)).toEqual([deploy]);
    expect(run('git -c core.hooksPath=hooks commit -m x')).toEqual([
      { path: "git's configuration", unread: 'core.hooksPath names files git runs or reads', shell: true },
    ]);
    expect(run('GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log')).toContainEqual(
      {
        path: 'GIT_CONFIG_COUNT',
        unread: 'GIT_CONFIG_COUNT configures git, whose configuration names programs it runs',
        shell: false,
      },
    );
    // A program named plainly is one installed, as the command's own is; user.name names none;
    // nor do settings that turn configuration off, or a program word only the session knows.
    expect(run('git -c user.name=x -c core.pager=less log')).toEqual([]);
    for (const command of [
      'GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git log',
      'git -c core.hooksPath=/dev/null commit -m x',
      'EDITOR="${EDITOR:-vim}" git commit',
    ])
      expect(run(command)).toEqual([]);
    expect(run('git --git-dir=repo.d --work-tree=. status')).toEqual([
      { path: "git's configuration", unread: 'git is configured from where only running tells', shell: true },
    ]);
    writeFileSync(join(project, 'home/.zshenv'), 'echo zsh\n');
    expect(run('ZDOTDIR=home zsh -c true')).toEqual([
      { path: 'P/home/.zshenv', text: 'echo zsh\n', shell: true },
    ]);
  });

  it('says so of a script the command may write before it runs it: read now, it would show what was there', () => {
    const written = {
      path: 'P/deploy.sh',
      unread: 'the command may write it before it runs it',
      shell: true,
    };
    for (const command of [
      'cp plain deploy.sh && bash deploy.sh',
      "cat > deploy.sh <<'EOF'\necho other\nEOF\nbash deploy.sh",
      'git checkout deploy.sh && ./deploy.sh',
      'cd tools && sed -i s/x/y/ ../deploy.sh && bash ../deploy.sh',
      // Into the folder that holds it, or below a link made to another folder.
      'cp tools/x.py . && bash deploy.sh',
      'cp -t . tools/x.py && bash deploy.sh',
      'cp -r tools/. . && bash deploy.sh',
      'sudo mv tools/x.py . && bash deploy.sh',
      'cp tools/x.py "$DEST" && bash deploy.sh',
      // What an archive, a download or git writes is not in its words.
      'tar xf p.tar && bash deploy.sh',
      'unzip -o p.zip && bash deploy.sh',
      'curl -O https://example.com/deploy.sh && bash deploy.sh',
      'git pull && bash deploy.sh',
      'git -C . stash pop && bash deploy.sh',
      'git show HEAD:tools/x.py --output=deploy.sh && bash deploy.sh',
      'gunzip deploy.sh.gz && bash deploy.sh',
      'docker cp box:/x.sh . && bash deploy.sh',
      'docker run -v "$PWD":/w img && bash deploy.sh',
      // Written by a program given its name, or by code run inline.
      'sort -o deploy.sh plain && bash deploy.sh',
      'find . -name x.py -exec cp {} deploy.sh ; && bash deploy.sh',
      'python3 -c "import shutil" && bash deploy.sh',
    ])
      expect(run(command)).toEqual([written]);
    expect(run('ln -sfn tools dir && bash dir/x.py')).toEqual([
      { path: 'P/dir/x.py', unread: 'the command may write it before it runs it', shell: true },
    ]);
    // What writes elsewhere, or keeps the work tree's files, leaves it read.
    for (const command of [
      'git status && bash deploy.sh',
      'git -C tools status && bash deploy.sh',
      'git -c color.ui=never rev-list HEAD && bash deploy.sh',
      'echo x > log.txt && bash deploy.sh',
      'cp a b/ && bash deploy.sh',
      'curl -sf localhost:3000/health && bash deploy.sh',
      'tar czf out.tgz tools && tar tzf out.tgz && bash deploy.sh',
      'unzip -l p.zip && 7z l p.7z && bash deploy.sh',
      'docker --context prod ps && bash deploy.sh',
    ])
      expect(run(command)).toEqual([{ path: 'P/deploy.sh', text: 'echo deploying\n', shell: true }]);
    // A program built and then run is no script: a binary is no one's to show.
    expect(run('make a-binary && ./a-binary')).toEqual([]);
  });

  it('reads no script through /proc or /dev, where the daemon would read its own open files', () => {
    const own = 'a path through /proc or /dev, which Latch would read as its own';
    expect(run('exec 19<deploy.sh; bash /dev/fd/19')).toEqual([
      { path: '/dev/fd/19', unread: own, shell: true },
    ]);
    expect(run('bash /proc/self/fd/19 19<deploy.sh')).toEqual([
      { path: '/proc/self/fd/19', unread: own, shell: true },
    ]);
    // A link there, or a folder linked there, is the same.
    expect(run('bash fd-link')).toEqual([{ path: 'P/fd-link', unread: own, shell: true }]);
    expect(run('bash fds/19')).toEqual([{ path: 'P/fds/19', unread: own, shell: true }]);
  });

  it('says so past the fourth script of one command, not passing over the fifth', () => {
    const found = run('sh deploy.sh; sh plain; sh big.sh; sh run-me; sh home/env.sh');
    expect(found).toHaveLength(5);
    expect(found.at(-1)).toEqual({
      path: 'P/home/env.sh',
      unread: 'more than the 4 scripts Latch reads of one command',
      shell: true,
    });
  });

  it('says why a script it names is not read: missing, not a regular file, too long', () => {
    expect(run('bash missing.sh')).toEqual([{ path: 'P/missing.sh', unread: 'ENOENT', shell: true }]);
    // A FIFO is not waited on: nothing writes to it.
    expect(run('bash pipe.sh')).toEqual([{ path: 'P/pipe.sh', unread: 'not a regular file', shell: true }]);
    expect(run('bash big.sh')).toEqual([
      { path: 'P/big.sh', unread: `${MOST_SCRIPT_BYTES + 1} bytes, more than Latch reads`, shell: true },
    ]);
  });
});

describe("the scripts a project's own configuration runs", () => {
  const pkg = () => join(project, 'pkg');
  beforeAll(() => {
    mkdirSync(join(project, 'pkg/sub'), { recursive: true });
    const scripts = {
      pretest: 'tsc --noEmit',
      test: 'vitest run',
      build: 'vite build',
      postinstall: 'node setup.js',
      constructor: 7,
    };
    writeFileSync(join(pkg(), 'package.json'), JSON.stringify({ name: 'x', scripts }));
    writeFileSync(join(pkg(), 'Makefile'), 'all:\n\tcc -o x x.c\n');
    writeFileSync(join(pkg(), 'sub/GNUmakefile'), 'x:\n\techo sub\n');
  });
  const runIn = (command: string) =>
    scriptsRun(command, pkg(), variables()).map(({ path, ...read }) => ({
      ...read,
      path: path.replace(pkg(), 'P'),
    }));
  const testScripts = {
    path: 'P/package.json',
    text: 'tsc --noEmit\nvitest run\n',
    part: 'the scripts "pretest", "test"',
    shell: true,
  };
  const buildScript = {
    path: 'P/package.json',
    text: 'vite build\n',
    part: 'the script "build"',
    shell: true,
  };

  it.each([
    'npm test',
    'npm t',
    'npm run test',
    'npm run-script test',
    'pnpm test',
    'yarn test',
    'npm --silent test',
    // After bun's `run`, `test` is the script, not bun's own test runner.
    'bun run test',
  ])('`%s` runs the test scripts of package.json, as shell commands', (command) => {
    expect(runIn(command)).toEqual([testScripts]);
  });

  it('reads each script a package runner is told to run, and the install scripts of an install', () => {
    for (const command of [
      'npm run build',
      'yarn build',
      'pnpm run build -- --watch',
      'bun run build',
      'bun build',
    ])
      expect(runIn(command)).toEqual([buildScript]);
    expect(runIn('npm test && npm run build')).toEqual([testScripts, buildScript]);
    const install = {
      path: 'P/package.json',
      text: 'node setup.js\n',
      part: 'the script "postinstall"',
      shell: true,
    };
    // An install's -D saves a dev dependency, not a folder; --version is no command (review I).
    for (const command of [
      'npm install',
      'npm ci',
      'yarn',
      'pnpm i',
      'bun install',
      'pnpm add -D vitest',
      'npm i -D @types/node',
      'yarn --frozen-lockfile',
    ])
      expect(runIn(command)).toEqual([install]);
    // A script it does not hold runs nothing of it, nor a value that is no script of its own.
    for (const command of [
      'npm run lint',
      'npm run constructor',
      'npm exec eslint',
      'npm run',
      'npx vitest',
      'npm --version',
    ])
      expect(runIn(command)).toEqual([]);
  });

  it("says it cannot read what a runner's settings beside the project make its scripts run, never showing them", () => {
    const settings = (file: string, text: string) => writeFileSync(join(pkg(), file), text);
    const unread = (file: string, setting: string) => ({
      path: file,
      unread: `it sets ${setting}, whose code Latch does not read`,
      shell: false,
    });
    try {
      settings('.npmrc', '//registry.example/:_authToken=t-123\nsave-exact=true\n');
      settings('.env', 'API_KEY=k-123\n');
      for (const command of ['npm test', 'pnpm test', 'yarn test', 'bun run test'])
        expect(runIn(command), command).toEqual([testScripts]);
      settings('.npmrc', '//registry.example/:_authToken=t-123\nSCRIPT_SHELL = ./sh.sh\n');
      expect(runIn('npm test')).toEqual([testScripts, unread('P/.npmrc', 'script-shell')]);
      expect(runIn('pnpm test')).toEqual([testScripts, unread('P/.npmrc', 'script-shell')]);
      settings('.npmrc', 'node-options=--require ./x.js\n');
      expect(runIn('npm run build')).toEqual([buildScript, unread('P/.npmrc', 'node-options')]);
      rmSync(join(pkg(), '.npmrc'));
      // Settings that change nothing a script runs (review Q): global packages' folder, Node's
      // memory, yarn 1's timeouts, a browser turned off.
      settings('.npmrc', 'prefix=/home/me/.npm-global\nnode-options=--max-old-space-size=8192\n');
      settings('.yarnrc', '--network-timeout 600000\n--ignore-engines true\n');
      settings('.env', 'BROWSER=none\nEDITOR=code\nNODE_OPTIONS="--max-old-space-size=4096"\n');
      for (const command of ['npm test', 'yarn test', 'bun run test'])
        expect(runIn(command), command).toEqual([testScripts]);
      rmSync(join(pkg(), '.yarnrc'));
      // npm expands `${VAR}` in a key: what it names only running tells.
      settings('.npmrc', 'script${NOPE?}-shell=./sh.sh\n');
      expect(runIn('npm test')).toEqual([testScripts, unread('P/.npmrc', 'script${NOPE?}-shell')]);
      rmSync(join(pkg(), '.npmrc'));
      // The user's own, in the home folder, and a project's above the package.
      writeFileSync(join(project, 'home/.npmrc'), 'globalconfig=/elsewhere\n');
      expect(runIn('npm test')).toEqual([testScripts, unread(join(project, 'home/.npmrc'), 'globalconfig')]);
      rmSync(join(project, 'home/.npmrc'));
      writeFileSync(join(project, '.npmrc'), 'workspace=web\n');
      expect(runIn('npm test')).toEqual([testScripts, unread(join(project, '.npmrc'), 'workspace')]);
      rmSync(join(project, '.npmrc'));
      settings('.yarnrc', 'script-shell "./sh.sh"\n');
      expect(runIn('yarn test')).toEqual([testScripts, unread('P/.yarnrc', 'script-shell')]);
      settings('.yarnrc', '--cwd elsewhere\n');
      expect(runIn('yarn test')).toEqual([testScripts, unread('P/.yarnrc', '--cwd')]);
      rmSync(join(pkg(), '.yarnrc'));
      settings('.yarnrc.yml', 'injectEnvironmentFiles: [.env.mine]\n');
      expect(runIn('yarn test')).toEqual([testScripts, unread('P/.yarnrc.yml', 'injectEnvironmentFiles')]);
      rmSync(join(pkg(), '.yarnrc.yml'));
      settings('.env.yarn', 'export NODE_OPTIONS="--require ./x.js"\n');
      expect(runIn('yarn test')).toEqual([testScripts, unread('P/.env.yarn', 'NODE_OPTIONS')]);
      settings('.env', 'PATH=./bin:/usr/bin\n');
      expect(runIn('bun run test')).toEqual([testScripts, unread('P/.env', 'PATH')]);
      settings('.env', 'NODE_OPTIONS: --require ./x.js\r');
      expect(runIn('bun run test')).toEqual([testScripts, unread('P/.env', 'NODE_OPTIONS')]);
      settings('.env', 'PATH=./bin:/usr/bin\n');
      // Each runner reads its own: npm no environment file, bun no .npmrc.
      expect(runIn('npm test')).toEqual([testScripts]);
      settings('.npmrc', 'script-shell=./sh.sh\n');
      expect(runIn('bun run test')).toEqual([testScripts, unread('P/.env', 'PATH')]);
      // npm runs a package's program with that shell too (review Q).
      for (const command of ['npx tsc', 'npm exec -- tsc', 'pnpm exec tsc'])
        expect(runIn(command), command).toEqual([unread('P/.npmrc', 'script-shell')]);
    } finally {
      for (const file of ['.npmrc', '.env', '.env.yarn', '.yarnrc', '.yarnrc.yml'])
        rmSync(join(pkg(), file), { force: true });
    }
  });

  it('says it cannot read the scripts of packages an option picks where it finds none, or a script only running names', () => {
    for (const command of ['pnpm --filter web build', 'npm test -w api', 'npm -ws test', 'pnpm -r build'])
      expect(runIn(command)).toEqual([
        { path: 'package.json', unread: 'it picks workspaces, and Latch finds none around it', shell: true },
      ]);
    // Every option npm reads for what runs its scripts or installs, however written (stop 48).
    for (const command of [
      'npm --script-shell ./sh.sh test',
      'npm --globalconfig=./rc test',
      'npm --node-gyp=./x.sh install',
      'npm --git=./x.sh install',
      'pnpm --pnpmfile=./x.cjs install',
    ])
      expect(runIn(command), command).toEqual([
        { path: 'package.json', unread: 'an option picks what runs its scripts', shell: true },
      ]);
    // npm's own options that begin like those are no shortening of them.
    expect(runIn('npm --include=dev --global test')).toEqual([testScripts]);
    // A folder the runner is told by name is read there (review I); one only running tells is not.
    writeFileSync(join(pkg(), 'sub/package.json'), JSON.stringify({ scripts: { test: 'echo sub' } }));
    const subTest = {
      path: 'P/sub/package.json',
      text: 'echo sub\n',
      part: 'the script "test"',
      shell: true,
    };
    for (const command of [
      'pnpm -C sub test',
      'yarn --cwd sub test',
      'npm --prefix sub test',
      'pnpm --dir=sub test',
    ])
      expect(runIn(command)).toEqual([subTest]);
    expect(runIn('pnpm -C "$D" test')).toEqual([
      { path: 'package.json', unread: 'its folder is one only running tells', shell: true },
    ]);
    expect(runIn('npm run "$SCRIPT"')).toEqual([
      { path: "npm's script", unread: 'its script is a value only running tells', shell: true },
    ]);
    writeFileSync(join(project, 'package.json'), '{"scripts": {"test": "x",}');
    expect(run('npm test')).toEqual([
      { path: 'P/package.json', unread: 'not JSON Latch can read', shell: true },
    ]);
    rmSync(join(project, 'package.json'));
  });

  it('reads the package.json a runner finds above the folder, as npm does', () => {
    const deep = join(pkg(), 'src/deep');
    mkdirSync(deep, { recursive: true });
    const shown = (folder: string) =>
      scriptsRun('npm test', folder, variables()).map(({ path, ...read }) => ({
        ...read,
        path: path.replace(pkg(), 'P'),
      }));
    expect(shown(deep)).toEqual([testScripts]);
    // Through a link, from where the folder really is; past a folder or a dangling link of that
    // name, as npm goes on (review I).
    mkdirSync(join(project, 'other'), { recursive: true });
    writeFileSync(join(project, 'other/package.json'), '{"scripts": {"test": "echo decoy"}}');
    symlinkSync(deep, join(project, 'other/link'));
    expect(shown(join(project, 'other/link'))).toEqual([testScripts]);
    mkdirSync(join(deep, 'package.json'));
    symlinkSync(join(project, 'nowhere'), join(pkg(), 'src/package.json'));
    expect(shown(deep)).toEqual([testScripts]);
  });

  it('reads a package runner however it is reached, and does not guess past an option it does not know', () => {
    // Behind another runner, a wrapper's flag, a version (review H).
    for (const command of [
      'corepack pnpm test',
      'npx npm test',
      'doppler run -- npm test',
      'op run -- npm test',
      'sudo -E npm test',
      'nice -5 npm test',
      'npx pnpm@9 test',
      'npm exec -- npm test',
    ])
      expect(runIn(command)).toEqual([testScripts]);
    const unknown = {
      path: 'package.json',
      unread: 'an option Latch does not know may take the word after it',
      shell: true,
    };
    for (const command of ['npm --foo warn test', 'npm run --foo silent build', 'pnpm --bar x install'])
      expect(runIn(command)).toEqual([unknown]);
    // A value joined to its option, an option Latch knows to take one, or a flag it knows to take
    // none, leaves the command plain (review I).
    for (const command of [
      'npm --loglevel=warn --if-present test',
      'npm --loglevel warn test',
      'npm --registry https://r.example test',
    ])
      expect(runIn(command)).toEqual([testScripts]);
    expect(runIn('npm --cache /tmp/c run build')).toEqual([buildScript]);
    const picks = (why: string) => [{ path: 'package.json', unread: why, shell: true }];
    expect(runIn('npm --userconfig x test')).toEqual(picks('an option picks what runs its scripts'));
    for (const command of ['yarn workspace sub build', 'pnpm recursive run build'])
      expect(runIn(command)).toEqual(picks('it picks workspaces, and Latch finds none around it'));
    for (const command of ['yarn workspace "$W" build', 'yarn workspaces focus', 'npm workspaces'])
      expect(runIn(command)).toEqual(picks('its command picks the packages'));
    expect(runIn('npm_config_script_shell=./x.sh npm test')).toContainEqual({
      path: 'npm_config_script_shell',
      unread: 'npm_config_script_shell loads code into the program that runs',
      shell: false,
    });
    for (const command of ['cross-env NODE_ENV=test npm test', 'if true; then npm test; fi'])
      expect(runIn(command)).toEqual([testScripts]);
    expect(runIn('bun --cwd sub run build')).toEqual([
      { path: "bun's script", unread: 'its folder is one only running tells', shell: false },
    ]);
  });

  it("reads npm's own aliases and lifecycles, and what it runs when package.json names nothing", () => {
    writeFileSync(
      join(pkg(), 'package.json'),
      JSON.stringify({ scripts: { prepare: 'husky', prepublishOnly: 'tsc' } }),
    );
    const prepare = { path: 'P/package.json', text: 'husky\n', part: 'the script "prepare"', shell: true };
    for (const command of [
      'npm in',
      'npm isnt',
      'npm sit',
      'npm install-ci-test',
      'npm update',
      'npm pack',
      'npm link',
    ])
      expect(runIn(command)).toEqual([prepare]);
    expect(runIn('npm publish --dry-run')).toEqual([
      {
        path: 'P/package.json',
        text: 'husky\ntsc\n',
        part: 'the scripts "prepare", "prepublishOnly"',
        shell: true,
      },
    ]);
    writeFileSync(join(pkg(), 'server.js'), "require('fs').readFileSync('../.bashrc')\n");
    expect(runIn('npm start')).toEqual([
      { path: 'P/package.json', text: 'node server.js\n', part: 'the script "start"', shell: true },
      { path: 'P/server.js', text: "require('fs').readFileSync('../.bashrc')\n", shell: false },
    ]);
    rmSync(join(pkg(), 'server.js'));
    writeFileSync(
      join(pkg(), 'package.json'),
      JSON.stringify({
        name: 'x',
        scripts: {
          pretest: 'tsc --noEmit',
          test: 'vitest run',
          build: 'vite build',
          postinstall: 'node setup.js',
          constructor: 7,
        },
      }),
    );
  });

  it('reads the makefile make reads, in the folder -C names, or the one -f names', () => {
    const makefile = { path: 'P/Makefile', text: 'all:\n\tcc -o x x.c\n', shell: true };
    const sub = { path: 'P/sub/GNUmakefile', text: 'x:\n\techo sub\n', shell: true };
    expect(runIn('make')).toEqual([makefile]);
    expect(runIn('make -j4 all')).toEqual([makefile]);
    expect(runIn('make -C sub x')).toEqual([sub]);
    expect(runIn('make --directory=sub')).toEqual([sub]);
    expect(runIn('make -f sub/GNUmakefile x')).toEqual([sub]);
    expect(runIn('make -C "$D"')).toEqual([
      { path: 'the makefile', unread: 'its folder is one only running tells', shell: true },
    ]);
    expect(run('make')).toEqual([]);
    // Flags joined, long options shortened, other makes, and a makefile read from input (review H).
    for (const command of [
      'make -sf sub/GNUmakefile',
      'make --fil=sub/GNUmakefile',
      'make --makef sub/GNUmakefile',
      'make --f sub/GNUmakefile',
      'make -sC sub',
      'make --dir sub',
      'sudo -E make -C sub',
      'bmake -C sub',
      'uv run make -C sub',
    ])
      expect(runIn(command)).toEqual([sub]);
    expect(runIn('cat x.mk | make -f -')).toEqual([
      { path: "make's input", unread: 'it reads the makefile its input holds', shell: true },
    ]);
    expect(runIn('MAKEFILES=x.mk make')).toEqual([
      { path: 'MAKEFILES', unread: 'MAKEFILES loads code into the program that runs', shell: false },
      makefile,
    ]);
  });

  it('reads the install scripts of the local packages an install installs: workspaces and folders', () => {
    const mono = join(project, 'mono');
    const put = (path: string, value: unknown) => {
      mkdirSync(join(mono, path, '..'), { recursive: true });
      writeFileSync(join(mono, path), typeof value === 'string' ? value : JSON.stringify(value));
    };
    put('package.json', {
      workspaces: ['packages/*', './apps/web/'],
      devDependencies: { lib: 'file:../lib' },
    });
    put('packages/a/package.json', { scripts: { postinstall: 'node a.js', test: 'vitest' } });
    put('packages/.hidden/package.json', { scripts: { install: 'echo hidden' } });
    put('packages/node_modules/package.json', { scripts: { install: 'echo modules' } });
    put('apps/web/package.json', { scripts: { prepare: 'vite build' } });
    put('apps/api/package.json', { scripts: { prepare: 'echo not a workspace' } });
    // A folder it depends on, which depends back: read once.
    put('../lib/package.json', {
      scripts: { preinstall: 'make lib' },
      dependencies: { mono: 'link:../mono' },
    });
    const inMono = (command: string) =>
      scriptsRun(command, mono, variables()).map(({ path, ...read }) => ({
        ...read,
        path: path.replace(project, 'P'),
      }));
    const installs = [
      {
        path: 'P/mono/packages/a/package.json',
        text: 'node a.js\n',
        part: 'the script "postinstall"',
        shell: true,
      },
      {
        path: 'P/mono/apps/web/package.json',
        text: 'vite build\n',
        part: 'the script "prepare"',
        shell: true,
      },
      { path: 'P/lib/package.json', text: 'make lib\n', part: 'the script "preinstall"', shell: true },
    ];
    for (const command of ['npm install', 'npm ci', 'yarn', 'pnpm i', 'bun install'])
      expect(inMono(command)).toEqual(installs);
    expect(inMono('npm test')).toEqual([]);
    // From a workspace's own folder, pnpm and yarn install the whole project.
    const fromWorkspace = scriptsRun('pnpm install', join(mono, 'apps/web'), variables()).map(({ path }) =>
      path.replace(project, 'P'),
    );
    expect(fromWorkspace).toEqual([installs[1]!.path, installs[0]!.path, installs[2]!.path]);
    // pnpm names its workspaces in a file of its own.
    put('tools/t/package.json', { scripts: { install: 'echo t' } });
    const tools = {
      path: 'P/mono/tools/t/package.json',
      text: 'echo t\n',
      part: 'the script "install"',
      shell: true,
    };
    for (const yaml of [
      'catalog:\n  x: ^1\npackages:\n  # tools\n  - \'tools/*\'\n  - "!**/test/**"\nonlyBuiltDependencies:\n  - x\n',
      'packages:\r\n- tools/* # no indent\r\n',
      'packages: [\'tools/*\', "x/*"] # flow\n',
    ]) {
      put('pnpm-workspace.yaml', yaml);
      expect(inMono('pnpm install')).toContainEqual(tools);
    }
    const unread = (why: string) => [{ path: 'a local package', unread: why, shell: true }];
    put('pnpm-workspace.yaml', 'packages: {tools: 1}\n');
    expect(inMono('pnpm install')).toEqual(unread('its workspaces are named in a way Latch does not read'));
    put('pnpm-workspace.yaml', `# ${'x'.repeat(MOST_SCRIPT_BYTES)}\npackages:\n  - tools/*\n`);
    expect(inMono('pnpm install')).toEqual(
      unread(`its pnpm-workspace.yaml: ${MOST_SCRIPT_BYTES + 25} bytes, more than Latch reads`),
    );
    rmSync(join(mono, 'pnpm-workspace.yaml'));
    // `**` walks the folders below, not into node_modules; braces are not expanded.
    put('packages/group/deep/package.json', { scripts: { install: 'echo deep' } });
    put('package.json', { workspaces: ['packages/**'] });
    expect(inMono('npm install')).toEqual([
      installs[0],
      {
        path: 'P/mono/packages/group/deep/package.json',
        text: 'echo deep\n',
        part: 'the script "install"',
        shell: true,
      },
    ]);
    // Links that lead back are walked no further than 2,048 folders (review K: it grew as 2^n).
    mkdirSync(join(mono, 'loop'));
    for (const name of ['a', 'b']) symlinkSync('.', join(mono, 'loop', name));
    const deep = `loop${'/*'.repeat(20)}`;
    put('package.json', { workspaces: [deep] });
    expect(inMono('npm install')).toEqual(
      unread(`its workspaces "${deep}": more folders than Latch looks through`),
    );
    execFileSync('mkfifo', [join(mono, 'pnpm-workspace.yaml')]);
    expect(inMono('pnpm install')).toEqual(unread('its pnpm-workspace.yaml: not a regular file'));
    rmSync(join(mono, 'pnpm-workspace.yaml'));
    put('package.json', { workspaces: ['packages/{a,b}'] });
    expect(inMono('npm install')).toEqual(
      unread('its workspaces "packages/{a,b}": a pattern Latch does not expand'),
    );
    // A folder named by its path alone, from `~`, or as a peer.
    put('package.json', { peerDependencies: { lib: '../lib' } });
    expect(inMono('npm install')).toEqual([installs[2]]);
    put('../home/lib/package.json', { scripts: { preinstall: 'make home' } });
    put('package.json', { dependencies: { lib: 'file:~/lib' } });
    expect(inMono('npm install')).toEqual([
      { path: 'P/home/lib/package.json', text: 'make home\n', part: 'the script "preinstall"', shell: true },
    ]);
    put('package.json', { dependencies: { z: 'file:vendor/z.tgz' } });
    expect(inMono('npm install')).toEqual(
      unread('it installs a package from an archive, whose scripts Latch does not read'),
    );
    put('package.json', { dependencies: { z: 'git+file:///srv/z.git' } });
    expect(inMono('npm install')).toEqual(
      unread('it installs "git+file:///srv/z.git", whose scripts Latch does not read'),
    );
    // Many packages with install scripts are each read: they count apart from a command's four.
    const many = Array.from({ length: 6 }, (_, index) => `many/p${index}`);
    for (const folder of many) put(`${folder}/package.json`, { scripts: { prepare: 'tsc -p .' } });
    put('package.json', { workspaces: ['many/*'] });
    expect(inMono('npm install').map(({ path, unread }) => ({ path, unread }))).toEqual(
      many.map((folder) => ({ path: `P/mono/${folder}/package.json`, unread: undefined })),
    );
  });

  it('reads the scripts of the workspaces an option or a command picks, by name, folder or all', () => {
    const mono = join(project, 'picks');
    const put = (path: string, value: unknown) => {
      mkdirSync(join(mono, path, '..'), { recursive: true });
      writeFileSync(join(mono, path), JSON.stringify(value));
    };
    put('package.json', {
      name: 'root',
      workspaces: ['packages/*', 'apps/*'],
      scripts: { test: 'echo root' },
    });
    put('packages/web/package.json', {
      name: '@acme/web',
      scripts: { test: 'vitest web', build: 'vite build' },
    });
    put('packages/api/package.json', { name: 'api', scripts: { test: 'vitest api' } });
    put('apps/site/package.json', { name: 'site', scripts: { build: 'next build' } });
    const inMono = (command: string, folder = mono) =>
      scriptsRun(command, folder, variables()).map(({ path, text, unread }) => ({
        path: path.replace(`${mono}/`, ''),
        ...(text === undefined ? { unread } : { text }),
      }));
    const root = { path: 'package.json', text: 'echo root\n' };
    const web = { path: 'packages/web/package.json', text: 'vitest web\n' };
    const api = { path: 'packages/api/package.json', text: 'vitest api\n' };
    const site = { path: 'apps/site/package.json', text: 'next build\n' };
    const webBuild = { path: 'packages/web/package.json', text: 'vite build\n' };
    for (const [commands, scripts] of [
      [['npm -w @acme/web test', 'npm test --workspace=@acme/web', 'npm -w packages/web test'], [web]],
      [['pnpm --filter web test', 'pnpm -F "@acme/*" test', 'pnpm --filter "{packages/web}" test'], [web]],
      [
        ['yarn workspace @acme/web test', 'yarn workspace @acme/web run test', 'bun --filter @acme/web test'],
        [web],
      ],
      [
        ['npm -w packages test', 'npm -w api -w @acme/web test'],
        [api, web],
      ],
      [['npm -w api --include-workspace-root test'], [root, api]],
      [
        ['npm -ws test', 'pnpm -r test', 'yarn workspaces run test', 'pnpm --filter "!site" test'],
        [root, api, web],
      ],
      [
        ['pnpm recursive run build', 'yarn workspaces foreach -A run build', 'bun run --filter "*" build'],
        [webBuild, site],
      ],
      [['pnpm -F ./apps build', 'pnpm --filter ./apps/** build'], [site]],
      [['pnpm -w test', 'npm test -- -w api'], [root]],
    ] as const)
      for (const command of commands) expect(inMono(command), command).toEqual(scripts);
    // Found from a workspace's folder as the runners find the project; a folder from there or
    // from the project's (npm's).
    for (const command of ['npm -w @acme/web test', 'npm -w packages/web test', 'pnpm -F ../web test'])
      expect(inMono(command, join(mono, 'packages/api')), command).toEqual([web]);
    // What Latch cannot follow is said unread, never passed over.
    const unread = (why: string) => [{ path: 'package.json', unread: why }];
    expect(inMono('npm -w nosuch test')).toEqual(unread('no workspace Latch finds is "nosuch"'));
    expect(inMono('pnpm --filter web... test')).toEqual(unread('a filter Latch does not read: "web..."'));
    expect(inMono('pnpm --filter "[origin/main]" test')).toEqual(
      unread('a filter Latch does not read: "[origin/main]"'),
    );
    expect(inMono('npm -w "$W" test')).toEqual(unread('the packages it picks are ones only running tells'));
    expect(inMono('yarn workspaces foreach --jobz 2 run build')).toEqual(
      unread('an option Latch does not know may take the word after it'),
    );
    // The runners do not agree on which project is the one: the workspaces of each are read.
    // pnpm takes the nearest pnpm-workspace.yaml over a package.json's own workspaces.
    writeFileSync(join(mono, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*\n');
    put('packages/api/package.json', { name: 'api', workspaces: ['decoy'], scripts: { test: 'vitest api' } });
    put('packages/api/decoy/package.json', { name: '@acme/web', scripts: { test: 'echo decoy' } });
    expect(inMono('pnpm --filter @acme/web test', join(mono, 'packages/api'))).toEqual([
      { path: 'packages/api/decoy/package.json', text: 'echo decoy\n' },
      web,
    ]);
    rmSync(join(mono, 'pnpm-workspace.yaml'));
    // Nested workspaces (yarn's) are read too.
    put('packages/api/decoy/package.json', { name: 'decoy', scripts: { test: 'echo nested' } });
    expect(inMono('yarn workspaces foreach -A run test')).toContainEqual({
      path: 'packages/api/decoy/package.json',
      text: 'echo nested\n',
    });
    rmSync(join(mono, 'packages/api/decoy'), { recursive: true });
    put('packages/api/package.json', { name: 'api', scripts: { test: 'vitest api' } });
    // Review L. A program run in the packages picked runs in their folders: a file it is given
    // is not the one here.
    for (const command of [
      'npm exec -w api -- sh x.sh',
      'pnpm --filter api exec sh x.sh',
      'pnpm -r exec sh x.sh',
      'yarn workspace api node x.sh',
      'yarn workspaces foreach -A exec sh x.sh',
      'bun --filter api x.sh',
    ])
      expect(inMono(command), command).toEqual([
        { path: 'x.sh', unread: 'its folder is one only running tells' },
      ]);
    // An option after pnpm's script may be the script's: read here and in the package.
    expect(inMono('pnpm test --filter api')).toEqual([root, api]);
    // npm's other spellings: `--ws`, `--iwr`, and the start of an option it reads.
    expect(inMono('npm test --ws')).toEqual([root, api, web]);
    expect(inMono('npm test -w api --iwr')).toEqual([root, api]);
    expect(inMono('npm test -w api --include-workspace')).toEqual(
      unread('an option Latch does not read may pick the packages, or what runs its scripts'),
    );
    // What runs in the package picked, `server.js` too, not the one here.
    writeFileSync(join(mono, 'packages/api/server.js'), 'listen()');
    expect(inMono('npm -w api start')).toEqual([
      { path: 'packages/api/package.json', text: 'node server.js\n' },
      { path: 'packages/api/server.js', text: 'listen()' },
    ]);
    // A package.json Latch cannot read may hold the name picked.
    writeFileSync(join(mono, 'packages/api/package.json'), '{"name": "api",');
    expect(inMono('npm -w @acme/web test')).toEqual(
      unread("a workspace's package.json Latch cannot read for its name"),
    );
    put('packages/api/package.json', { name: 'api', scripts: { test: 'vitest api' } });
    // pnpm-workspace.yaml that may name its packages in a form Latch does not read.
    for (const yaml of [
      '{packages: [hidden/*]}\n',
      '!!str packages:\n  - hidden/*\n',
      'x: 1\rpackages:\r  - hidden/*\r',
    ])
      (writeFileSync(join(mono, 'pnpm-workspace.yaml'), yaml),
        expect(inMono('pnpm -r test'), yaml).toEqual(
          yaml.startsWith('x')
            ? [root, api, web]
            : unread('its workspaces are named in a way Latch does not read'),
        ));
    rmSync(join(mono, 'pnpm-workspace.yaml'));
    // A pattern of many `*` is matched in linear time (a regular expression took seconds).
    expect(inMono(`pnpm --filter '${'*a'.repeat(12)}*b' test`)).toEqual(
      unread(`no workspace Latch finds is "${'*a'.repeat(12)}*b"`),
    );
    // An install installs the whole project, whichever package it names.
    put('packages/api/package.json', { name: 'api', scripts: { postinstall: 'node setup.js' } });
    expect(inMono('npm -w @acme/web install left-pad')).toEqual([
      { path: 'packages/api/package.json', text: 'node setup.js\n' },
    ]);
  });

  it('reads what a shell is given to run, or eval, however few its words', () => {
    const makefile = { path: 'P/Makefile', text: 'all:\n\tcc -o x x.c\n', shell: true };
    for (const command of [
      'sh -c make',
      "bash -c 'make'",
      'eval make',
      'su -c make',
      'su -s /bin/sh me -c make',
      'fish --command=make',
      'sudo -u me sh -c make',
      'xargs sh -c make',
      // With the words after it as its $0, $1…
      "sh -c '$0' make",
      `sh -c 'exec "$@"' sh make`,
    ])
      expect(runIn(command)).toEqual([makefile]);
    for (const command of ['eval npm test', 'bash -lc npm\\ test', 'sudo -u me sh -c "npm test"'])
      expect(runIn(command)).toEqual([testScripts]);
    // Commands git runs where it checks out other files: what is here now is not what runs.
    for (const [command, what] of [
      ['git rebase -x make HEAD~3', 'git rebase'],
      ['git rebase --exec=make HEAD~3', 'git rebase'],
      ['git rebase --ex make HEAD~3', 'git rebase'],
      ['git rebase -ix make HEAD~3', 'git rebase'],
      ['git bisect run make', 'git bisect'],
      ['git submodule foreach make', 'git submodule'],
    ])
      expect(runIn(command!)).toEqual([
        { path: what, unread: 'it runs commands where git checks out other files', shell: true },
      ]);
    expect(runIn("sh -c '${1}' _ make")).toEqual([makefile]);
    // `"$@"` and `$*` stand for every word after `$0`, however many.
    for (const command of [`sh -c 'exec "$@"' sh npm test`, "bash -c 'cd . && $*' _ npm test"])
      expect(runIn(command), command).toEqual([testScripts]);
    // Parameters made into others, moved, or joined to other text run what only running tells
    // (reviews M and N: `\$@` written in as text once hid the `;` after it).
    for (const command of [
      "sh -c 'echo \\$@;ma''ke' _",
      `sh -c 'echo "$@ x"; ma''ke' _ 'a"b'`,
      `bash -c '"n$@"' sh pm test`,
      `bash -c '"\${@:1}"' sh npm test`,
      "bash -c '${0%X} ${1%X}' npmX testX",
      `bash -c 'set -e; "$@"' sh npm test`,
      "sh -c 'IFS=x; $*' _ makexall",
      `sh -c 'exec "$@"' sh make "$X"`,
    ])
      expect(runIn(command), command).toEqual([
        {
          path: command.startsWith('bash') ? "bash's code" : "sh's code",
          unread: 'it runs code only running tells',
          shell: true,
        },
      ]);
    for (const command of [`sh -c 'echo "$@"' _ a b`, "sh -c 'set -e; echo x' _ a"])
      expect(runIn(command)).toEqual([]);
    // Code that moves its parameters gives them values only running tells (review N: it read none).
    expect(runIn("sh -c 'shift; $1' _ true make")).toEqual([
      { path: "sh's code", unread: 'it runs code only running tells', shell: true },
    ]);
    // Linear however deep: each level is read within the one before, and no deeper than 16.
    expect(runIn(`${'eval '.repeat(15)}make`)).toEqual([makefile]);
    expect(runIn(`${'eval '.repeat(17)}make`)).toEqual([
      { path: 'code', unread: 'code run deeper or longer than Latch reads', shell: true },
    ]);
    // Code that runs itself is read once (review K: it grew as 2^16). Read with the outer command,
    // before the shell gives it its words, its `$0` is one only running tells.
    const itself = 'sh -c "$0" "$0"; sh -c "$0" "$0"';
    expect(runIn(`sh -c '${itself}' '${itself}'`)).toEqual([
      { path: "sh's code", unread: 'it runs code only running tells', shell: true },
    ]);
    // Code, or its words, that the program running the shell gives it: its input, or the words
    // it puts in (`{}`, `:::`).
    for (const command of [
      'echo make | xargs sh -c',
      'find . -name "*.sh" -exec sh -c {} \\;',
      'find . -exec sh -c \'"$0"\' {} \\;',
      'xargs -I{} sh -c "cat {}"',
      'parallel sh -c ::: make',
      'parallel bash -c {.} ::: make.x',
      // A replacement string an option names, and what xargs adds to the words (review M).
      'echo make | xargs -I % sh -c %',
      "xargs --replace=Q sh -c 'Q -f x.mk'",
      'parallel sh -c {1.} ::: make.x',
      `echo make | xargs sh -c '"$@"' _`,
    ])
      expect(runIn(command), command).toEqual([
        {
          path: command.includes('bash') ? "bash's code" : "sh's code",
          unread: 'it runs code only running tells',
          shell: true,
        },
      ]);
    // A package runner or make whose words xargs or parallel completes, or that find runs in each
    // folder found (review N).
    for (const command of [
      'echo test | xargs npm',
      'xargs -I{} npm --prefix {} test',
      'parallel make -C ::: x',
    ])
      expect(
        runIn(command).map(({ unread }) => unread),
        command,
      ).toEqual(['the program running it adds to its words']);
    expect(runIn('find . -name Makefile -execdir make \\;').map(({ unread }) => unread)).toContain(
      'its folder is one only running tells',
    );
    expect(runIn('npm_config_workspace=web npm test')).toContainEqual({
      path: 'npm_config_workspace',
      unread: 'npm_config_workspace loads code into the program that runs',
      shell: false,
    });
    // Where no program puts words in, `{}` and `:::` are the code's own (review M).
    for (const command of [
      "bash -c 'git stash show stash@{0}'",
      `sh -c 'find . -exec rm {} +'`,
      "sh -c 'echo $1' _ :::",
    ])
      expect(runIn(command), command).toEqual([]);
    // With no code and no program, these start a shell that runs their input.
    for (const command of ['echo make | sudo -s', 'sudo -u me -i', 'su', 'su - me', 'doas -s'])
      expect(runIn(command), command).toEqual([
        {
          path: `${command.split(' ').at(command.startsWith('echo') ? 3 : 0)}'s shell`,
          unread: 'it starts a shell that runs the code its input holds, which is not known before it runs',
          shell: true,
        },
      ]);
    // Review M: letters joined before a value, runuser's su-like words, and other programs that
    // start a shell on their input.
    for (const command of [
      'sudo -iu me',
      'echo make | sudo -iu "$USER"',
      'doas -su me',
      'runuser me',
      'runuser -l me',
      'newgrp wheel',
      'sg wheel',
      'pkexec',
      'script -q /dev/null',
      'machinectl shell',
    ])
      expect(
        runIn(command).map(({ unread }) => unread),
        command,
      ).toEqual(['it starts a shell that runs the code its input holds, which is not known before it runs']);
    // Stop 48: a wrapper's long option written apart from its value, and programs that start a
    // shell when given none.
    for (const command of [
      'sudo --user root -s',
      'sudo --chdir . -s',
      'sudo -R / -s',
      'unshare -r',
      'unshare --user --map-root-user',
      'chroot /',
      'nsenter --target 1 --mount',
      'firejail --noprofile',
      'systemd-run --user --shell',
    ])
      expect(
        runIn(command).map(({ unread }) => unread),
        command,
      ).toEqual(['it starts a shell that runs the code its input holds, which is not known before it runs']);
    // A long option Latch does not know may have taken the word after it (getopt's `--us` for `--user`).
    for (const command of ['sudo --us root -s', 'xargs --fancy x mytool'])
      expect(runIn(command), command).toEqual([
        {
          path: command.split(' ')[0],
          unread: `an option of ${command.split(' ')[0]} Latch does not know may take the word after it`,
          shell: true,
        },
      ]);
    for (const command of [
      'sudo --user root make',
      'sudo --user=root make',
      'timeout --signal KILL --foreground 5 make',
      'unshare -r make',
      'systemd-run --user --scope make',
      'sudo --preserve-env make',
      // firejail's long options are written `--name=value`; xargs's --replace takes its value so.
      'firejail --noprofile make',
      'chroot / make',
    ])
      expect(runIn(command), command).toEqual([makefile]);
    for (const command of ['sudo -s make', 'su - me -c make', 'runuser -l me -c make', 'sudo -iu me make'])
      expect(runIn(command), command).toEqual([makefile]);
    for (const command of ['sudo -v', 'sudo -l', 'sudo -k']) expect(runIn(command)).toEqual([]);
  });

  it('reads a package runner, make or a script after a program Latch does not know, which may run them', () => {
    const makefile = { path: 'P/Makefile', text: 'all:\n\tcc -o x x.c\n', shell: true };
    for (const command of ['watchexec -e ts -- npm test', 'entr -r npm test', 'devbox run npm test'])
      expect(runIn(command)).toEqual([testScripts]);
    for (const command of ['ssh-agent make', 'valgrind make all', 'dbus-run-session -- make'])
      expect(runIn(command)).toEqual([makefile]);
    writeFileSync(join(pkg(), 'sub/x.sh'), 'make\n');
    expect(runIn('ssh-agent bash sub/x.sh')).toEqual([{ path: 'P/sub/x.sh', text: 'make\n', shell: true }]);
    // A guess: what is not there, or cannot be read, is passed over, never said unread
    // (`foo npm --bar x test` may not run npm at all), and brings no "calls like it" rule of its own.
    expect(runIn('foo npm --bar x test')).toEqual([]);
    expect(runIn('entr bash missing.sh')).toEqual([]);
    expect(runIn('entr make -C "$D"')).toEqual([]);
    expect(mayRunOtherCode('entr make', variables())).toBe(false);
    // Only where the program's words start: not an option's value or a word further on, nor
    // after programs that name others without running them, those Latch reads on their own, or
    // prose a quoted string may be.
    for (const command of [
      'grep -C 3 make Makefile',
      'rg -n make',
      'which make',
      'apt-get install make',
      'ssh host make',
      'docker exec c npm test',
      'pytest -k make',
      'git commit -m "run make first"',
    ])
      expect(runIn(command)).toEqual([]);
  });
});

describe('code a command may run that its words do not hold', () => {
  it.each([
    'bash deploy.sh',
    'timeout 60 bash build.sh',
    'cat x | sh',
    'python3 -m pytest',
    'node --test',
    './gradlew build',
    'patch -p1 < x.diff',
    'NODE_OPTIONS="-r ./x.js" npm test',
    // A code file any program is given may be what it runs.
    'go run main.go',
    'pytest -q tests/test_x.py',
    // A project's scripts and makefile, which the next edit may change.
    'npm test',
    'make',
    // The environment a program starts with may choose its code.
    'PATH=/tmp/x ls',
    'env PATH=/tmp/x git status',
    'sudo GIT_EXEC_PATH=/tmp/x git status',
    // So may git's configuration given on its command line: it names programs git runs.
    'git -c core.fsmonitor=/tmp/x status',
    'git -C sub --config-env=core.pager=P log',
    // A project's tasks, tests, builds and installs, and its node_modules' programs (review H).
    'rake',
    'composer test',
    'pip install -e .',
    'npx vitest',
    'npm exec eslint .',
    'sudo -E make install',
    'doppler run -- npm test',
    'vitest run',
    'cross-env CI=1 jest',
    'if true; then bash x.sh; fi',
  ])('`%s` may', (command) => {
    expect(mayRunOtherCode(command, variables())).toBe(true);
  });

  it.each([
    'git status',
    'docker ps',
    'ls | xargs echo',
    'git push origin main',
    'ls A=1',
    'git commit -c HEAD',
  ])('`%s` does not', (command) => {
    expect(mayRunOtherCode(command, variables())).toBe(false);
  });
});

describe('the files a patch writes', () => {
  it('reads unified and git headers, with and without their first folder, never /dev/null', () => {
    const patch = [
      'diff --git a/src/x.ts b/src/x.ts',
      '--- a/src/x.ts\t2026-12-05 10:00',
      '+++ b/src/x.ts',
      '--- /dev/null',
      '+++ .bashrc',
      'rename from old.txt',
      'rename to .claude/settings.json',
    ].join('\n');
    expect(patchedFiles(patch).sort()).toEqual(
      [
        ...['a/src/x.ts', 'b/src/x.ts', 'src/x.ts', 'x.ts', '.bashrc', 'old.txt'],
        ...['.claude/settings.json', 'settings.json'],
      ].sort(),
    );
  });
});
