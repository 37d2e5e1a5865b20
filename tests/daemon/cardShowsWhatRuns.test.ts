import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LatchClient } from '../../daemon/sdk/latch.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import { hookInput, runLatch } from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

// What the phone shows is what runs (review kd): a caller's title, detail and target are its own
// claims, shown as the agent's words; the call's input, command or patch is always on the card.
let paired: PairedDaemon;
let project: string;
let latch: LatchClient;

beforeAll(async () => {
  paired = await startPairedDaemon({ policy: 'default = "ask"\n' });
  project = join(mkdtempSync(join(tmpdir(), 'latch-shows-')), 'app');
  mkdirSync(project, { recursive: true });
  latch = await connect({ socketPath: paired.machine.socket, agent: 'sdk-test' });
});

afterAll(() => paired.stop());

/** Starts a call that asks, reads the details as the phone opens them, then denies it. */
async function cardOf(start: () => Promise<unknown>): Promise<RequestDetails> {
  const { relay, phones } = paired;
  const before = relay.requests.length;
  const running = start();
  const request = await relay.nextRequest(before);
  const { details } = await phoneApproves(phones[0], request, relay.origin);
  await relay.sendDenial(phones[0], request);
  await running;
  return details;
}

const never = () => {
  throw new Error('ran without an approval');
};

const codex = (tool: string, input: Record<string, unknown>) => () =>
  runLatch(paired.machine, ['hook', 'codex'], {
    input: hookInput('PreToolUse', tool, input, { cwd: project, turn_id: 't1', model: 'gpt-5-codex' }),
  });

describe('an SDK call with no command', () => {
  it('shows the input it runs on, its title and detail only as the agent’s words', async () => {
    const details = await cardOf(() =>
      latch.guard(
        {
          tool: 'transfer',
          input: { amount: 1000000, to: 'mallory' },
          title: 'Transfer $10 to Alice',
          detail: 'amount: 10\nto: alice',
          cwd: project,
        },
        never,
      ),
    );
    // The heading and the notification are Latch's: the tool and its input.
    expect(details.title).toMatch(/^transfer \{.*"amount": ?1000000.*"to": ?"mallory".*\}$/);
    expect(details.detail).toContain('1000000');
    expect(details.detail).toContain('mallory');
    expect(details.description).toBe('Transfer $10 to Alice');
    expect(details.notes).toEqual(['The agent adds (its own words, not what runs):\namount: 10\nto: alice']);
  });

  it('shows the input when the detail is the title', async () => {
    const details = await cardOf(() =>
      latch.guard(
        {
          tool: 'deploy',
          input: { env: 'production', drop_db: true },
          title: 'Deploy docs to staging',
          detail: 'Deploy docs to staging',
        },
        never,
      ),
    );
    expect(details.title).toMatch(/^deploy \{.*production.*\}$/);
    expect(details.detail).toContain('"drop_db": true');
    expect(details.description).toBe('Deploy docs to staging');
  });

  it('has a person type a caller’s target only where the call itself spells it', async () => {
    const claimed = await cardOf(() =>
      latch.guard(
        { tool: 'deploy', input: { env: 'production' }, risk: 'critical', target: 'staging' },
        never,
      ),
    );
    expect(claimed).toMatchObject({ risk: 'critical', target: 'deploy' });
    const spelled = await cardOf(() =>
      latch.guard({ tool: 'drop_table', input: { name: 'users' }, risk: 'critical', target: 'users' }, never),
    );
    expect(spelled.target).toBe('users');
    // Part of a word, or one letter, is no reading of the call (review rv9b).
    for (const target of ['prod', 'e'])
      expect(
        await cardOf(() =>
          latch.guard({ tool: 'deploy', input: { env: 'production' }, risk: 'critical', target }, never),
        ),
      ).toMatchObject({ target: 'deploy' });
  });
});

describe('an SDK call with a command', () => {
  it('keeps the caller’s detail out of the command’s box, as a note said to be the agent’s', async () => {
    const details = await cardOf(() =>
      latch.guard(
        {
          tool: 'shell',
          command: 'rm -rf /srv/data',
          detail: '# dry run: --dry-run is set by the wrapper, nothing is deleted',
          title: 'List data',
        },
        never,
      ),
    );
    expect(details).toMatchObject({
      title: 'rm -rf /srv/data',
      detail: 'rm -rf /srv/data',
      description: 'List data',
    });
    expect(details.notes).toEqual([
      'The agent adds (its own words, not what runs):\n# dry run: --dry-run is set by the wrapper, nothing is deleted',
    ]);
  });
});

describe('a Codex patch', () => {
  const patch = '*** Begin Patch\n*** Add File: notes.md\n+hello\n*** End Patch';

  it('given as an argv is read as the patch, not as shell words that match Latch’s secrets', async () => {
    const details = await cardOf(codex('apply_patch', { command: ['apply_patch', patch] }));
    expect(details.risk).not.toBe('critical');
    expect(JSON.stringify(details.notes ?? [])).not.toContain('host-key');
    expect(details).toMatchObject({ title: 'Patch: Add notes.md', detail: patch });
  });

  it('is titled by the files it changes', async () => {
    const moving = [
      '*** Begin Patch',
      '*** Update File: src/a.ts',
      '*** Move to: ../other/deploy.sh',
      '@@',
      '-export const a = 1;',
      '+echo hi',
      '*** Add File: README.md',
      '+# readme',
      '*** Delete File: old.txt',
      '*** End Patch',
    ].join('\n');
    const details = await cardOf(codex('apply_patch', { command: moving }));
    expect(details.title).toBe('Patch: Update src/a.ts → ../other/deploy.sh; Add README.md; Delete old.txt');
  });
});

describe('a file tool’s diff', () => {
  it('writes out the line breaks of a path in its labels: they drew rows of another file', async () => {
    const details = await cardOf(() =>
      runLatch(paired.machine, ['hook', 'claude-code'], {
        input: hookInput(
          'PreToolUse',
          'Write',
          { file_path: `${project}/a.txt\n+++ b/README.md\n@@ -1,1 +1,1 @@\n+# Project`, content: 'x\n' },
          { cwd: project },
        ),
      }),
    );
    expect(details.diff).not.toMatch(/^\+\+\+ b\/README\.md$/m);
    expect(details.diff).not.toMatch(/^\+# Project$/m);
    expect(details.diff).toMatch(/^\+\+\+ b\/a\.txt⟨U\+000A⟩\+\+\+ b\/README\.md/m);
    expect(details.diff!.split('\n').filter((line) => line.startsWith('+'))).toEqual([
      expect.stringMatching(/^\+\+\+ b\/a\.txt⟨U\+000A⟩/),
      '+x',
    ]);
  });
});

describe('a command a shell reads otherwise than its lines read', () => {
  const bash = (command: string, description: string) => () =>
    runLatch(paired.machine, ['hook', 'claude-code'], {
      input: hookInput('PreToolUse', 'Bash', { command, description }, { cwd: project }),
    });

  it('says where a line that looks like a comment continues the one before it, and runs', async () => {
    const details = await cardOf(bash('npm run build\\\n#; npm publish', 'Build'));
    expect(details.detail).toBe('npm run build\\\n#; npm publish');
    expect(details.notes).toEqual([
      'Line 2 continues line 1, whose backslash joins them: its # is no comment, and what follows it runs.',
    ]);
    // A comment's own backslash, and one that splits a command's words, are no news.
    expect((await cardOf(bash('# a note \\\n# more\nls \\\n  -la', 'List'))).notes).toBeUndefined();
  });

  it('says where a <<- here-document really ends, and which lines then run', async () => {
    const command =
      'cat > NOTES.md <<-EOF\n\t# Release notes\n\tEOF\n\tnpm publish\n\tThanks to all contributors.\nEOF';
    const details = await cardOf(bash(command, 'Write release notes'));
    expect(details.notes).toEqual([
      'The here-document begun on line 1 (<<-EOF) ends at line 3, where a tab-indented EOF ends it: lines 4–6 run as commands.',
    ]);
    expect((await cardOf(bash('cat > a.md <<-EOF\n\tnotes\n\tEOF', 'Write notes'))).notes).toBeUndefined();
  });

  it("says what a $'…' word is to bash, its escapes read as bash reads them", async () => {
    const details = await cardOf(bash("bash -c $'\\x72\\x6d -rf \\056/build'", 'Clean'));
    expect(details.notes).toEqual(["Bash reads $'\\x72\\x6d -rf \\056/build' (line 1) as: rm -rf ./build"]);
    // A $'…' without escapes is what it reads as; a plain printf is no news.
    expect((await cardOf(bash("echo $'done' && printf '%s\\n' x", 'Say done'))).notes).toBeUndefined();
  });

  it("reads a quote a backslash escapes inside $'…' as bash does: the backslash after it joins the next line", async () => {
    const details = await cardOf(bash("echo $'it\\'s' \\\n#; npm publish", 'Say it'));
    expect(details.notes).toEqual([
      "Bash reads $'it\\'s' (line 1) as: it's",
      'Line 2 continues line 1, whose backslash joins them: its # is no comment, and what follows it runs.',
    ]);
  });
});
