import { createHash } from 'node:crypto';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import type { LatchConfig } from '../config/config.ts';
import type { GateRequest } from '../socket/localApi.ts';
import type { RequestRecord, StateStore } from '../state/stateStore.ts';
import { conversationId } from './conversationId.ts';

/** How long a reported agent session stays refused: sessions are short-lived, a new one starts clean. */
export const REPORTED_SESSION_MS = 24 * 60 * 60 * 1000;

/** In state.db's meta, per reported conversation: until when it is refused. */
const reportedKey = (conversation: string) => `reported_session:${conversation}`;

type ApprovalsConfig = LatchConfig['approvals'];

/** What the push-fatigue defences add to a request's sealed details. */
export type FatigueTerms = Pick<RequestDetails, 'reviewSeconds' | 'reviewReason' | 'askedAgainAfterDeny'>;

/**
 * The defences against push fatigue (asking until a tired person taps yes): a burst of phone
 * approvals puts a review hold on the next requests; a request asked again soon after a phone
 * denied it is marked and held; an agent session a person reported is refused from then on.
 * Each only adds friction or refuses: none can turn a deny into an allow.
 */
export class PushFatigue {
  readonly #store: StateStore;
  /** When each verified phone approval counted, oldest first. */
  #approvals: number[] = [];
  /** Recent phone denies: what was asked → when it was denied. */
  readonly #denied = new Map<string, number>();
  /** What each request this daemon is waiting on asked (askKey), to know what a deny refers to. */
  readonly #asked = new Map<string, string>();
  /**
   * When each request this daemon is waiting on went to the phones, on the monotonic clock
   * (performance.now): its review hold is measured on it too, so a wall clock set ahead during
   * the hold does not end it (review rt).
   */
  readonly #askedAtMonotonic = new Map<string, number>();

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** The session's report, if a person reported it and it has not lapsed. */
  reportedUntil(request: GateRequest, now: number): number | undefined {
    return request.session ? this.conversationReportedUntil(conversationId(request.session), now) : undefined;
  }

  /** Until when a reported agent session's calls are refused; undefined when it is not. */
  conversationReportedUntil(conversation: string, now: number): number | undefined {
    const until = Number(this.#store.meta(reportedKey(conversation)) ?? 0);
    return until > now ? until : undefined;
  }

  /** The hold and the mark a new request carries, before it is sealed. */
  terms(request: GateRequest, config: ApprovalsConfig, now: number): FatigueTerms {
    const deniedAt = this.#denied.get(askKey(request));
    const askedAgain = deniedAt !== undefined && now - deniedAt < config.askedAgainSeconds * 1000;
    const recent = this.#recentApprovals(config, now);
    const burst = recent >= config.burstApprovals;
    if (!askedAgain && !burst) return {};
    const minutes = Math.max(1, Math.round(config.burstWindowSeconds / 60));
    // The mark says itself why a request asked again is held; a burst needs its reason.
    return {
      reviewSeconds: config.reviewSeconds,
      ...(burst
        ? {
            reviewReason: `You approved ${recent} requests in ${minutes} minute${minutes === 1 ? '' : 's'}: take a moment.`,
          }
        : {}),
      ...(askedAgain ? { askedAgainAfterDeny: true } : {}),
    };
  }

  /** A request went to the phones. */
  asked(requestId: string, request: GateRequest): void {
    this.#asked.set(requestId, askKey(request));
    this.#askedAtMonotonic.set(requestId, performance.now());
  }

  /** The request was decided or given up: nothing more to remember of it but a deny. */
  settled(requestId: string, deniedByPhoneAt?: number): void {
    const asked = this.#asked.get(requestId);
    this.#asked.delete(requestId);
    this.#askedAtMonotonic.delete(requestId);
    if (asked && deniedByPhoneAt !== undefined) this.#denied.set(asked, deniedByPhoneAt);
  }

  /** A verified phone approval, counted toward a burst. */
  approved(now: number): void {
    this.#approvals.push(now);
  }

  /**
   * Whether an approval at `now` comes before the request's hold ended, measured on this host's
   * clocks: the hold ends once it has passed on both the wall clock (from `createdAt`, sealed)
   * and the monotonic clock (from when the request went to the phones), so a clock set ahead
   * during the hold does not end it.
   */
  tooSoon(requestId: string, details: RequestDetails, now: number): boolean {
    if (details.reviewSeconds === undefined) return false;
    const holdMs = details.reviewSeconds * 1000;
    const askedAt = this.#askedAtMonotonic.get(requestId);
    return (
      now < details.createdAt + holdMs || (askedAt !== undefined && performance.now() - askedAt < holdMs)
    );
  }

  /**
   * Refuses the request's agent session from now on, whether or not the request still waits.
   * Undefined when there is none to refuse: a call that named no session (blocking every such
   * call would block `latch request` itself).
   */
  reportSession(record: RequestRecord, now: number): { conversation: string; until: number } | undefined {
    if (!record.conversation) return undefined;
    const until = now + REPORTED_SESSION_MS;
    this.#store.setMeta(reportedKey(record.conversation), String(until));
    return { conversation: record.conversation, until };
  }

  #recentApprovals(config: ApprovalsConfig, now: number): number {
    const since = now - config.burstWindowSeconds * 1000;
    this.#approvals = this.#approvals.filter((at) => at > since);
    return this.#approvals.length;
  }
}

/**
 * What a request asks, in one agent session: the same key for the same thing asked again. A
 * title, detail or target is part of what is asked: `latch request --title …` has no command.
 */
function askKey(request: GateRequest): string {
  const what = JSON.stringify([
    request.session ?? null,
    request.agent,
    request.tool,
    request.title ?? null,
    request.detail ?? null,
    request.target ?? null,
    request.command ?? request.input ?? request.paths,
  ]);
  return toBase64url(createHash('sha256').update(`latch asked v1\0${what}`).digest().subarray(0, 18));
}
