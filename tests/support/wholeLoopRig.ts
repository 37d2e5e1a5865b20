import { approvePending, openPending, type PairedBrowserPhone } from './browserFlows.ts';
import type { HostileProxy } from './hostileProxy.ts';
import { askHook, auditLines, hookInput, type HookAnswer } from './latchMachine.ts';
import { startPhoneRig, type PhoneRig } from './phoneRig.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
[[rule]]
name = "sleeping is fine"
tool = "exec"
command = "sleep *"
action = "allow"
[[rule]]
name = "root"
tool = "Bash"
command = "rm -rf /*"
action = "ask"
timeout_seconds = 8
[[rule]]
name = "destructive"
tool = "Bash"
command = "rm *"
action = "ask"
risk = "medium"
`;

/** The whole loop, every part real: a host whose resume needs two phones, behind a hostile proxy. */
export interface WholeLoopRig {
  rig: PhoneRig;
  proxy: HostileProxy;
  /** Every command an agent asked about through `hook`: none may be found in the relay's storage. */
  commands: string[];
  /** An agent's PreToolUse call through `latch hook claude-code`, answered once a phone decides. */
  hook(tool: string, toolInput: Record<string, unknown>): Promise<HookAnswer>;
  approveOn(phone: PairedBrowserPhone, title: RegExp): Promise<void>;
  denyOn(phone: PairedBrowserPhone, title: RegExp): Promise<void>;
  /** The host's audited refusals of tokens for `requestId`. */
  refusals(requestId: string): Record<string, unknown>[];
}

/** Starts the rig with `phones` paired, the first trusted, each next one approved by the first. */
export async function startWholeLoopRig(phones: string[]): Promise<WholeLoopRig> {
  // Everyone, daemon and phones, reaches the relay through the proxy: it can lie to both.
  const rig = await startPhoneRig({
    name: 'e2e-relay',
    relay: 'plain',
    hostileProxy: true,
    quorum: 2,
    policy: POLICY,
    phones,
  });
  const { origin, machine } = rig;
  const commands: string[] = [];
  return {
    rig,
    proxy: rig.proxy!,
    commands,
    hook: (tool, toolInput) => {
      if (typeof toolInput['command'] === 'string') commands.push(toolInput['command']);
      return askHook(
        machine,
        hookInput('PreToolUse', tool, toolInput, { session_id: 'e2e', cwd: '/srv/app' }),
      );
    },
    approveOn: (phone, title) => approvePending(phone.browser, origin, title),
    denyOn: async (phone, title) => {
      await openPending(phone.browser, origin, title);
      await phone.browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
      await phone.browser.page.getByRole('status').getByText('Denied').waitFor();
    },
    refusals: (requestId) =>
      auditLines(machine).filter(
        (line) => line['event'] === 'token_refused' && line['requestId'] === requestId,
      ),
  };
}
