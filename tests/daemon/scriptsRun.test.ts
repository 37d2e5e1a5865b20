import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOST_SCRIPT_BYTES, scriptsRun } from '../../daemon/policy/scriptsRun.ts';

let project: string;
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
  copyFileSync(process.execPath, join(project, 'a-binary'));
  execFileSync('mkfifo', [join(project, 'pipe.sh')]);
  for (const file of ['run-me', 'plain', 'a-binary']) chmodSync(join(project, file), 0o755);
});

afterAll(() => rmSync(project, { recursive: true, force: true }));

const run = (command: string) =>
  scriptsRun(command, project, variables()).map(({ path, text, unread, shell }) => ({
    path: path.replace(project, 'P'),
    ...(text !== undefined ? { text } : {}),
    ...(unread !== undefined ? { unread } : {}),
    shell,
  }));

describe('the scripts a command runs', () => {
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
    'bash $(echo x) ; bash deploy.sh',
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
    "php -r 'echo 1;'",
    'bash',
    'ls deploy.sh',
    'cat deploy.sh | bash',
  ])('finds none in `%s`: its code is in the command, or read from elsewhere', (command) => {
    expect(run(command)).toEqual([]);
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
