import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { changesTheLeash } from '../../daemon/policy/changesTheLeash.ts';
import { commandWords } from '../../daemon/policy/commandWords.ts';
import { attachesToTheDaemon, stopsTheDaemon } from '../../daemon/policy/stopsTheDaemon.ts';

// The two guards of Latch itself, in this process (selfProtectionDaemon.test.ts drives them through
// the built daemon): what may stop the daemon, and what changes the leash.
const DAEMON_PID = 4242;
/** A simple command as the policy reads it: its own words come last, after quoted text read again. */
const simple = (text: string) => commandWords(text, {}).at(-1)!;
const stops = (text: string) => stopsTheDaemon(simple(text), DAEMON_PID);

describe('a command that could stop the daemon', () => {
  it.each([
    // Signals by name or pattern: the daemon's name is one a pattern can hit.
    'pkill node',
    'killall latch',
    'killall5 -9',
    'skill -KILL latch',
    '/usr/bin/PKILL -f latch',
    'xargs pkill',
    'git log --grep killall',
    // kill, aimed at the daemon, a process group or every process.
    'kill 4242',
    'kill -9 4242',
    'kill -s KILL 4242',
    'kill -n 9 4242',
    'kill --signal TERM 4242',
    'kill -- 4242',
    'kill -TERM -- -1',
    'kill 0',
    'kill -9 -1',
    'kill -1',
    'kill -9 -4242',
    'kill -9 -4243 123',
    // Numbers as kill reads them: blanks around, a sign.
    "kill ' 4242'",
    'kill +4242',
    "kill $'\\t4242'",
    "/usr/bin/kill -9 ' 4242 '",
    "kill -9 ' -1'",
    // procps's kill takes a pid as 32 bits: 2^32 + 4242 is the daemon, 2^32 - 1 every process.
    '/bin/kill 4294971538',
    'env kill -9 4294967295',
    '/bin/kill 4294967296',
    'kill -- -42',
    // Only -l, -L, --list and --table only list: another option is a signal.
    'kill -list 4242',
    'kill --l 4242',
    'kill 123 4242',
    '/bin/KILL 4242',
    // A target only running tells, or none in sight.
    'kill',
    'kill -9',
    'xargs kill',
    'kill -s',
    // fuser kills what holds a file.
    'fuser -k /tmp/latch.sock',
    'fuser -vk 8080/tcp',
    'fuser -K 8080/tcp',
    'fuser --kill /tmp/latch.sock',
    'fuser -m /tmp -k',
    // Service managers, with a word that says latch or one only running tells.
    'systemctl stop latch',
    'systemctl --user stop LATCH-daemon.service',
    'service latch stop',
    // A pattern systemctl matches against its units itself.
    "systemctl restart 'l?tch'",
    "service 'latc[h]' stop",
    // The user's own manager, which runs the daemon: any verb that is no question.
    'systemctl --user restart l?tch',
    'systemctl --user set-environment NODE_OPTIONS=--require=/tmp/x.js',
    'systemctl --user import-environment NODE_OPTIONS',
    'systemctl --user exit',
    'systemctl --user daemon-reload',
    'systemctl --user stop dev-session.target',
    'systemctl --us set-environment NODE_OPTIONS=--require=/tmp/x.js',
    'systemctl --use exit',
    'systemctl --user -n 5 restart latch',
    'dbus-update-activation-environment --systemd NODE_OPTIONS=--require=/tmp/x.js',
    'loginctl kill-user dev',
    'loginctl terminate-session 3',
    'launchctl list',
    // Wherever it stands: asking more is the safe direction.
    'sudo -u dev pkill latch',
    'env kill 4242',
  ])('flags %s', (command) => {
    expect(stops(command)).toBe(true);
  });

  it.each([
    // kill aimed plainly elsewhere: the shell, its last job, another pid, a container.
    'kill 4243',
    'kill -9 123 456',
    'kill %1',
    'kill -- %1',
    'docker kill web',
    'kill -l',
    'kill -L',
    'kill --list',
    'kill --table',
    'kill -l 9 4242',
    'kill -s 4242 123',
    'kill -sKILL 4243',
    'kill -9 -- 4243',
    'kill -- -s 4243',
    'kill -9 -TERM 123',
    'kill -- -1x',
    'kill web-1',
    // Not a decimal pid, which kill refuses (though 0x1092 is 4242).
    'kill 0x1092',
    // Programs that stop nothing, or not the daemon.
    'fuser -v /tmp/latch.sock',
    'fuser -m /tmp',
    'fuser -v /srv/my-kiosk',
    'fuser',
    'systemctl stop nginx',
    'systemctl',
    'systemctl --user status latch',
    'systemctl --user list-units',
    'systemctl --user show-environment',
    'systemctl --user -n 5 status latch',
    'systemctl --user --lines 5 status latch',
    'service nginx restart',
    'loginctl list-sessions',
    'loginctl show-user nokill-dev',
    'loginctl',
    'echo kill-user',
    'ls -la',
    'skilled worker',
  ])('leaves %s to the policy', (command) => {
    expect(stops(command)).toBe(false);
  });

  // Test names stay free of "$": Stryker selects the tests to run against a mutant by name.
  it('flags a target or a word only running tells, but not the shell itself or its last job', () => {
    const flagged = [
      'kill $(pgrep latch)',
      'kill "$PID"',
      'kill $$0',
      'systemctl stop "$UNIT"',
      'loginctl "$VERB" dev',
    ];
    for (const command of flagged) expect(stops(command), command).toBe(true);
    for (const command of ['kill $$', 'kill -9 $!', 'kill $BASHPID'])
      expect(stops(command), command).toBe(false);
  });

  it('reads each word as a program wherever it stands, however often it is named', () => {
    expect(stops(`${'kill '.repeat(200)}4243`)).toBe(false);
    expect(stops(`${'kill '.repeat(200)}4242`)).toBe(true);
    expect(stops('echo kill 4243')).toBe(false);
    expect(stops('nice systemctl restart nginx latch')).toBe(true);
  });

  it('compares a pid with this daemon, and 0 with every process in the group', () => {
    // Past the largest pid Linux gives (2^22): no process here has it, nor threads such as 77.
    const noProcess = 2 ** 22 + 1;
    expect(stopsTheDaemon(simple('kill 77'), 77)).toBe(true);
    expect(stopsTheDaemon(simple('kill 77'), noProcess)).toBe(false);
    expect(stopsTheDaemon(simple('kill 0'), noProcess)).toBe(true);
  });

  it('takes any thread of the daemon for the daemon: kill(2), ptrace and prlimit act on its whole process', () => {
    // This test's own process stands for the daemon: Node runs threads beside the main one.
    const threads = readdirSync(`/proc/${process.pid}/task`).filter((id) => id !== String(process.pid));
    expect(threads.length).toBeGreaterThan(0);
    for (const thread of threads) {
      expect(stopsTheDaemon(simple(`kill -STOP ${thread}`), process.pid)).toBe(true);
      expect(attachesToTheDaemon(simple(`gdb -batch -p ${thread}`), process.pid)).toBe(true);
    }
    // A process that is no thread of it is another.
    expect(stopsTheDaemon(simple(`kill ${process.ppid}`), process.pid)).toBe(false);
  });
});

describe('a command that changes the leash', () => {
  it.each([
    ['latch init', 'latch init'],
    ['latch pair', 'latch pair'],
    ['latch install claude-code', 'latch install'],
    ['latch uninstall', 'latch uninstall'],
    ['latch daemon stop', 'latch daemon'],
    ['latch --verbose --json PAIR', 'latch pair'],
    ['LATCH init', 'latch init'],
    ['npx latch@1 init', 'latch init'],
    ['npx latch@latest pair', 'latch pair'],
    ['node ./node_modules/latch/bin/latch.cjs uninstall', 'latch uninstall'],
    ['node dist/latch/main.mjs install', 'latch install'],
    ['node /opt/Latch/cli.js daemon', 'latch daemon'],
    ['/usr/local/bin/latch.js pair', 'latch pair'],
    ['latch.mjs init', 'latch init'],
    ['latch devices --revoke phone-1', 'latch devices --revoke'],
    ['latch devices --revoke=phone-1', 'latch devices --revoke'],
    ['latch devices phone-1 --revoke', 'latch devices --revoke'],
    ['node latch/main.mjs init', 'latch init'],
    // A mention counts, wherever it stands.
    ['git commit -m latch pair', 'latch pair'],
    ['echo latch status latch init', 'latch init'],
    ['sudo latch init', 'latch init'],
  ])('flags %s as %s', (command, leash) => {
    expect(changesTheLeash(simple(command))).toBe(leash);
  });

  it('flags a subcommand only running tells', () => {
    expect(changesTheLeash(simple('latch "$SUBCOMMAND"'))).toBe('latch …');
    expect(changesTheLeash(simple('latch -v "$SUBCOMMAND"'))).toBe('latch …');
    expect(changesTheLeash(simple('latch devices "$WHAT"'))).toBe('latch devices --revoke');
  });

  it.each([
    'latch status',
    'latch doctor',
    'latch audit verify',
    'latch hosts',
    'latch devices',
    'latch devices --revoked',
    'latch devices --list --revoke-all',
    'latch devices phone--revoke',
    'latch hosts --revoke phone-1',
    'less dist/latch/main.js.map init',
    'latch panic',
    'latch exec -- make',
    'latch',
    'latch --help',
    'latches init',
    'unlatch init',
    'latch@1/x init',
    'latch.ts init',
    'node dist/latch/main.ts install',
    'node latchkey/main.mjs init',
    'cat latch/notes.txt init',
    'ls init latch',
  ])('leaves %s to the policy', (command) => {
    expect(changesTheLeash(simple(command))).toBeUndefined();
  });
});
