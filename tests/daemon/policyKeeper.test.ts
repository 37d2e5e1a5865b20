import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { parsePolicy } from '../../daemon/policy/policy.ts';
import { PolicyKeeper } from '../../daemon/policy/policyKeeper.ts';
import { realPath } from '../../daemon/policy/realPath.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

// The policy in force and where a path leads, in this process with a real state database and
// audit log (policy.test.ts drives the keeper through the built daemon, which mutants never reach).
let directory = '';
beforeEach(() => {
  directory = realpathSync(mkdtempSync(join(tmpdir(), 'latch-policy-keeper-')));
});

describe('the policy in force', () => {
  const ASKS = 'default = "ask"\n';
  const DENIES = 'default = "deny"\n';
  const ALLOWS = 'default = "allow"  # looser\n';
  let store: StateStore;
  let keeper: PolicyKeeper;
  let policyPath = '';
  const approvals = () =>
    readFileSync(join(directory, 'audit.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['event'] === 'policy_approved')
      .map(({ by }) => by);
  const keeperOf = (on: StateStore) =>
    new PolicyKeeper(
      policyPath,
      on,
      new AuditLog(join(directory, 'audit.log'), on, { redactContent: false }),
    );

  beforeEach(() => {
    policyPath = join(directory, 'policy.toml');
    store = new StateStore(join(directory, 'state.db'));
    keeper = keeperOf(store);
    return () => store.close();
  });

  it('is none without a file: every gated call is denied until latch init', () => {
    expect(keeper.current()).toEqual({ ok: false, message: `no policy at ${policyPath}; run latch init` });
  });

  it('is the file as first found, recorded as approved', () => {
    writeFileSync(policyPath, ASKS);
    expect(keeper.current()).toMatchObject({ ok: true, policy: parsePolicy(ASKS) });
    expect(keeper.current()).not.toHaveProperty('loosening');
    expect(store.meta('policy_text')).toBe(ASKS);
    expect(approvals()).toEqual(['first start']);
  });

  it('is none while the file does not parse, and the approved one comes back when it is fixed', () => {
    writeFileSync(policyPath, ASKS);
    keeper.current();
    writeFileSync(policyPath, 'default = "maybe"\n');
    const view = keeper.current();
    expect(view.ok).toBe(false);
    expect(!view.ok && view.message).toMatch(new RegExp(`^the policy ${policyPath} is malformed: .*default`));
    expect(keeper.current()).toBe(view);
    writeFileSync(policyPath, ASKS);
    expect(keeper.current()).toMatchObject({ ok: true, policy: parsePolicy(ASKS) });
    expect(approvals()).toEqual(['first start']);
  });

  it('sees an edit that keeps the size, and one that keeps the time stamp', () => {
    const sameSize = 'default = "deny"';
    expect(sameSize).toHaveLength(ASKS.length);
    writeFileSync(policyPath, ASKS);
    keeper.current();
    writeFileSync(policyPath, sameSize);
    expect(keeper.current()).toMatchObject({ ok: true, policy: parsePolicy(sameSize) });
    // A copy that keeps the time stamp (cp -p, an unpacked archive).
    const stamp = new Date('2026-01-01T00:00:00Z');
    writeFileSync(policyPath, ASKS);
    utimesSync(policyPath, stamp, stamp);
    keeper.current();
    writeFileSync(policyPath, ALLOWS);
    utimesSync(policyPath, stamp, stamp);
    expect(keeper.current()).toMatchObject({
      ok: true,
      policy: parsePolicy(DENIES),
      loosening: { text: ALLOWS },
    });
  });

  it('takes a tightening at once and records it', () => {
    writeFileSync(policyPath, ASKS);
    keeper.current();
    writeFileSync(policyPath, DENIES);
    expect(keeper.current()).toMatchObject({ ok: true, policy: parsePolicy(DENIES) });
    expect(keeper.current()).not.toHaveProperty('loosening');
    expect(store.meta('policy_text')).toBe(DENIES);
    expect(approvals()).toEqual(['first start', 'tightening (takes effect at once)']);
  });

  it('keeps the approved policy while a loosening waits for a phone, then applies it once approved', () => {
    writeFileSync(policyPath, ASKS);
    const approved = keeper.current();
    writeFileSync(policyPath, ALLOWS);
    const waiting = keeper.current();
    expect(waiting).toEqual({
      ok: true,
      policy: parsePolicy(ASKS),
      hash: approved.ok && approved.hash,
      loosening: { hash: expect.stringMatching(/^[0-9a-f]{64}$/), text: ALLOWS, approvedText: ASKS },
    });
    expect(keeper.current()).toBe(waiting);
    expect(store.meta('policy_text')).toBe(ASKS);
    keeper.approve(ALLOWS, 'phone-1');
    expect(keeper.current()).toMatchObject({
      ok: true,
      policy: parsePolicy(ALLOWS),
      hash: waiting.ok && waiting.loosening?.hash,
    });
    expect(approvals()).toEqual(['first start', 'phone-1']);
  });

  it('sees an approval another process recorded, though the file did not change', () => {
    writeFileSync(policyPath, ASKS);
    keeper.current();
    writeFileSync(policyPath, ALLOWS);
    expect(keeper.current()).toHaveProperty('loosening');
    const other = new StateStore(join(directory, 'state.db'));
    try {
      keeperOf(other).approve(ALLOWS, 'phone-1');
    } finally {
      other.close();
    }
    expect(keeper.current()).toMatchObject({ ok: true, policy: parsePolicy(ALLOWS) });
    expect(keeper.current()).not.toHaveProperty('loosening');
  });

  it('drops a waiting loosening when the file goes back to the approved policy', () => {
    writeFileSync(policyPath, ASKS);
    const approved = keeper.current();
    writeFileSync(policyPath, ALLOWS);
    keeper.current();
    writeFileSync(policyPath, ASKS);
    expect(keeper.current()).toEqual(approved);
  });
});

describe('where a path leads', () => {
  it('is the path itself when it exists and has no links', () => {
    writeFileSync(join(directory, 'totp.json'), '{}');
    expect(realPath(join(directory, 'totp.json'))).toBe(join(directory, 'totp.json'));
    expect(realPath('/')).toBe('/');
  });

  it('is the deepest existing folder with the missing parts after it', () => {
    expect(realPath(join(directory, 'new', 'deeper', 'file'))).toBe(join(directory, 'new', 'deeper', 'file'));
  });

  it('follows a link to a file, and one to where a file would be', () => {
    mkdirSync(join(directory, '.latch'));
    writeFileSync(join(directory, '.latch', 'totp.json'), '{}');
    symlinkSync(join(directory, '.latch', 'totp.json'), join(directory, 'innocent'));
    symlinkSync('.latch/not-yet.json', join(directory, 'dangling'));
    expect(realPath(join(directory, 'innocent'))).toBe(join(directory, '.latch', 'totp.json'));
    expect(realPath(join(directory, 'dangling'))).toBe(join(directory, '.latch', 'not-yet.json'));
  });

  it('follows a linked folder, and a relative link from the folder the link is in', () => {
    mkdirSync(join(directory, '.latch'));
    mkdirSync(join(directory, 'work'));
    symlinkSync(join(directory, '.latch'), join(directory, 'work', 'notes'));
    symlinkSync('notes/policy.toml', join(directory, 'work', 'link'));
    expect(realPath(join(directory, 'work', 'notes', 'new.txt'))).toBe(join(directory, '.latch', 'new.txt'));
    expect(realPath(join(directory, 'work', 'link'))).toBe(join(directory, '.latch', 'policy.toml'));
  });

  it('stops at a loop of links, and at a file where a folder should be, without throwing', () => {
    symlinkSync(join(directory, 'b'), join(directory, 'a'));
    symlinkSync(join(directory, 'a'), join(directory, 'b'));
    writeFileSync(join(directory, 'file'), '');
    expect(realPath(join(directory, 'a'))).toBe(join(directory, 'a'));
    expect(realPath(join(directory, 'file', 'inside'))).toBe(join(directory, 'file', 'inside'));
  });

  it('keeps a path too long to open as written', () => {
    symlinkSync(tmpdir(), join(directory, 'link'));
    const tooLong = join(directory, 'link', 'x'.repeat(4097));
    expect(realPath(tooLong)).toBe(tooLong);
  });

  it('follows a path of exactly the longest length the kernel resolves', () => {
    symlinkSync(tmpdir(), join(directory, 'link'));
    const prefix = join(directory, 'link') + '/';
    const longest = prefix + 'x'.repeat(4096 - prefix.length);
    expect(realPath(longest)).toBe(join(realpathSync(tmpdir()), 'x'.repeat(4096 - prefix.length)));
  });

  it('takes a `..` after a link from where the link leads, as the kernel does', () => {
    mkdirSync(join(directory, 'home', 'project'), { recursive: true });
    symlinkSync('.', join(directory, 'home', 'project', 'd'));
    symlinkSync('d/..', join(directory, 'home', 'project', 'up'));
    expect(realPath(join(directory, 'home', 'project', 'up', '.bashrc'))).toBe(
      join(realpathSync(directory), 'home', '.bashrc'),
    );
  });

  it('looks again once a `..` climbs back from a folder not made yet (review Ze2)', () => {
    mkdirSync(join(directory, '.latch'));
    symlinkSync(join(directory, '.latch'), join(directory, 'conf'));
    expect(realPath(`${directory}/not-yet/../conf/policy.toml`)).toBe(
      join(realpathSync(directory), '.latch', 'policy.toml'),
    );
  });

  it('walks a path too long to open as written as a tool that takes its `.` out would', () => {
    mkdirSync(join(directory, '.latch'));
    symlinkSync(join(directory, '.latch'), join(directory, 'conf'));
    expect(realPath(`${directory}/${'./'.repeat(2100)}conf/policy.toml`)).toBe(
      join(realpathSync(directory), '.latch', 'policy.toml'),
    );
  });

  it("leads /proc/self/cwd to the agent's folder, not the daemon's, and shares its looks", () => {
    mkdirSync(join(directory, 'project'));
    symlinkSync('/proc/self/cwd/..', join(directory, 'project', 'above'));
    const looks = new Map();
    const walk = { processFolder: join(directory, 'project'), looks };
    expect(realPath(join(directory, 'project', 'above', '.zshenv'), walk)).toBe(
      join(realpathSync(directory), '.zshenv'),
    );
    expect(realPath('/proc/thread-self/root/etc', walk)).toBe('/etc');
    expect(realPath('/proc/self//./cwd/x', walk)).toBe(join(realpathSync(directory), 'project', 'x'));
    expect(looks.size).toBeGreaterThan(0);
    // Without the agent's folder, it is the daemon's own (this test's process).
    expect(realPath('/proc/self/cwd')).toBe(process.cwd());
  });
});
