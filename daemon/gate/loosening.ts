import type { RiskLevel } from '../../shared/messages/common.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import type { ConfigKeeper } from '../config/configKeeper.ts';
import { daemonLog as log } from '../output/daemonLog.ts';
import type { PolicyKeeper } from '../policy/policyKeeper.ts';
import type { GateAnswer, GateRequest } from '../socket/localApi.ts';
import { RESERVED_AGENT } from '../socket/reservedAgent.ts';
import type { StateStore } from '../state/stateStore.ts';
import type { Asking } from './asking.ts';
import { CallIds } from './callIds.ts';
import { deny } from './deny.ts';

/** A change to Latch itself, which only a phone approves: see Loosening.approveChange. */
export interface ChangeRequest {
  kind: 'policy' | 'config' | 'phone' | 'totp';
  /** What makes this change this one (a hash of the new text, the new phone's id). */
  key: string;
  title: string;
  detail: string;
  /** What the change changes, as a unified diff (a loosened policy). */
  diff?: string;
  risk: RiskLevel;
  /** What a person types to approve it at critical risk. */
  target: string;
}

export interface LooseningOptions {
  store: StateStore;
  audit: AuditLog;
  policy: PolicyKeeper;
  configKeeper: ConfigKeeper;
  /** The config in force now. */
  config(): LatchConfig;
  asking: Asking;
}

/** Changes to Latch itself: a looser policy or config, a new phone, a TOTP. Only a phone allows one. */
export class Loosening {
  readonly #options: LooseningOptions;
  readonly #askedLoosenings = new Set<string>();

  constructor(options: LooseningOptions) {
    this.#options = options;
  }

  /**
   * Asks the phones to approve a change to Latch itself. Never decided by the policy or a
   * terminal fallback, and never joined to anything but the same change: only a paired phone's
   * verified approval of this very request is an allow.
   */
  async approveChange(change: ChangeRequest): Promise<GateAnswer> {
    const { store, audit, asking } = this.#options;
    const request: GateRequest = {
      agent: RESERVED_AGENT,
      tool: `${RESERVED_AGENT}.${change.kind}`,
      paths: [],
      title: change.title,
      detail: change.detail,
      ...(change.diff !== undefined ? { diff: change.diff } : {}),
      session: 'latch',
      toolUseId: `${change.kind}:${change.key}`,
      interactive: false,
      canDefer: false,
      shortened: false,
    };
    const answer = await asking.askOnce(request, {
      risk: change.risk,
      timeoutSeconds: this.#options.config().approvals.timeoutSeconds,
      target: change.target,
    });
    if (answer.decision !== 'allow') return answer;
    const record = answer.requestId ? store.request(answer.requestId) : undefined;
    if (
      answer.via === 'phone' &&
      record?.state === 'approved' &&
      record.dedupKey === CallIds.of(store).dedupKey(request)
    )
      return answer;
    audit.append({
      event: 'change_refused',
      kind: change.kind,
      requestId: answer.requestId,
      via: answer.via,
    });
    return deny('denied', 'only a phone’s approval of this very change counts', answer.requestId);
  }

  /** A looser policy or config waits, the approved one in force, until a phone approves this text. */
  askToLoosen(
    kind: 'policy' | 'config',
    loosening: { hash: string; text: string },
    shown: string,
    diff?: string,
  ): void {
    const asked = `${kind}:${loosening.hash}`;
    if (this.#askedLoosenings.has(asked)) return;
    this.#askedLoosenings.add(asked);
    const keeper = kind === 'policy' ? this.#options.policy : this.#options.configKeeper;
    this.approveChange({
      kind,
      key: loosening.hash,
      title: `Loosen the Latch ${kind}`,
      detail: `The ${kind} file changed in a way that loosens it (sha256 ${loosening.hash.slice(0, 16)}…). Until you approve, the previous ${kind} stays in force.${shown ? `\n\n${shown}` : ''}`,
      ...(diff !== undefined ? { diff } : {}),
      risk: 'high',
      target: kind,
    })
      .then((answer) => {
        if (answer.decision === 'allow') keeper.approve(loosening.text, answer.reason);
        else
          this.#options.audit.append({
            event: `${kind}_loosening_refused`,
            hash: loosening.hash,
            reason: answer.reason,
          });
      })
      .catch((error: unknown) => {
        // Not recorded (a locked state.db, an audit log that cannot be written): the looser file
        // stays unapproved, the next call asks again, and the daemon goes on serving.
        this.#askedLoosenings.delete(asked);
        log(
          `the ${kind} loosening could not be recorded: ${(error as Error).message}; asked again on the next call`,
        );
      });
  }
}
