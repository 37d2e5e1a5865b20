import { f, type Infer } from '../schema/index.ts';
import { assertionSchema, digest, nonce, RISK_LEVELS } from './common.ts';
import { LIMITS } from './limits.ts';

export const DECISIONS = ['approve', 'deny'] as const;
export type Decision = (typeof DECISIONS)[number];

/**
 * What an approval may grant beyond the one call: calls like it for half an hour, or for the rest
 * of the agent's session (docs/policy.md#grants). Absent, it approves this call once.
 */
export const GRANTS = ['half_hour', 'session'] as const;
export type Grant = (typeof GRANTS)[number];

/**
 * The narrow rule the daemon proposes with a request: this tool, in this folder, running a
 * command of exactly these plain words (`words`), followed, when `thenAnyName`, by one more word
 * that is any name (docs/policy.md#grants). It is part of the sealed details, so the phone's
 * signature commits to it.
 */
export const similarCallSchema = /* @__PURE__ */ f.object({
  tool: f.text(LIMITS.nameBytes),
  words: f.array(f.text(LIMITS.nameBytes), 32),
  thenAnyName: f.boolean(),
  folder: f.text(LIMITS.cwdBytes),
  /** The policy rule that asked: a grant covers only calls this same rule asks about. */
  policyRule: f.text(LIMITS.nameBytes),
  /** The agent session's conversation id, when it has one: what a session grant is for. */
  conversation: f.optional(f.id()),
});
export type SimilarCall = Infer<typeof similarCallSchema>;

/**
 * What the person reads, sealed end to end from the daemon to each phone. Every text is already
 * clean, and `requestHash` is SHA-256 over this object's canonical JSON, so the phone shows
 * exactly what its signature commits to. `shortened` says cleaning changed something.
 */
export const requestDetailsSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  fleet: f.id(),
  host: f.id(),
  hostName: f.text(LIMITS.nameBytes),
  requestId: f.id(),
  agent: f.text(LIMITS.nameBytes),
  tool: f.text(LIMITS.nameBytes),
  title: f.text(LIMITS.titleBytes),
  detail: f.text(LIMITS.detailBytes, { multiline: true }),
  /**
   * Latch's own words on a call, each drawn in a box of its own apart from `detail`: a line of
   * the command, which the agent writes, can then never pass for one. A caller's own `detail` is
   * one too, headed as the agent's words.
   */
  notes: f.optional(f.array(f.text(LIMITS.notesBytes, { multiline: true }), LIMITS.notesPerRequest)),
  cwd: f.optional(f.text(LIMITS.cwdBytes)),
  /** The name a person types to approve a critical request, e.g. the branch or the database. */
  target: f.optional(f.text(LIMITS.targetBytes)),
  /** The agent's own words for the call (a command's description, an SDK call's title), shown under the title: never as it. */
  description: f.optional(f.text(LIMITS.titleBytes)),
  /** The folder name of `cwd`, and a short label of the agent session: the card's "project · session". */
  project: f.optional(f.text(LIMITS.nameBytes)),
  session: f.optional(f.text(LIMITS.nameBytes)),
  /** A unified diff of what a file edit or a loosening changes, start and end kept when long. */
  diff: f.optional(f.text(LIMITS.diffBytes, { multiline: true })),
  risk: f.oneOf(RISK_LEVELS),
  createdAt: f.timestamp(),
  exp: f.timestamp(),
  nonce: nonce(),
  /**
   * Random bytes the relay never receives (every other member it sees, or could guess): without
   * them it could test guesses of a short request against `requestHash`, offline. The daemon
   * always sends it; read as optional so that an app newer than a host still opens its
   * requests (the phone signs the hash of what it opened, which the daemon checks against its own).
   */
  salt: f.optional(nonce()),
  shortened: f.boolean(),
  /**
   * Push-fatigue defences (daemon/gate/pushFatigue): seconds from `createdAt` before an approval
   * counts, whatever the risk; the daemon refuses an earlier one (`too_soon`). The reason says why.
   */
  reviewSeconds: f.optional(f.integer(1, 3600)),
  reviewReason: f.optional(f.text(LIMITS.reasonBytes)),
  /** The same agent session asked the same thing soon after a phone denied it. */
  askedAgainAfterDeny: f.optional(f.boolean()),
  /** The rule an approval may also grant (GRANTS); none for Latch's own files or critical requests. */
  similar: f.optional(similarCallSchema),
});
export type RequestDetails = Infer<typeof requestDetailsSchema>;

/** Sealed details for one phone: see e2e/sealForDevice. */
export const sealedForDeviceSchema = /* @__PURE__ */ f.object({
  device: f.id(),
  box: f.base64url(1, LIMITS.sealedBoxBytes),
});
export type SealedForDevice = Infer<typeof sealedForDeviceSchema>;

/**
 * Daemon → relay. The relay sees ids, times, a risk level and ciphertext; never the command.
 * Requests with the same `dedupKey` (one agent session and tool call) join the pending one.
 * `dedupKey` and `conversation` are keyed hashes under a secret of the host (HMAC-SHA-256): the
 * relay can tell that two are equal, and not test a guess of what they hash.
 */
export const approvalRequestSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  fleet: f.id(),
  host: f.id(),
  requestId: f.id(),
  conversation: f.id(),
  dedupKey: f.id(),
  risk: f.oneOf(RISK_LEVELS),
  createdAt: f.timestamp(),
  exp: f.timestamp(),
  requestHash: digest(),
  nonce: nonce(),
  sealed: f.array(sealedForDeviceSchema, LIMITS.devicesPerFleet),
});
export type ApprovalRequest = Infer<typeof approvalRequestSchema>;

/**
 * Phone → relay → daemon: a WebAuthn assertion whose challenge commits to one request and one
 * decision (approvals/approvalChallenge). The daemon verifies it itself and uses it once.
 */
export const capabilityTokenSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  fleet: f.id(),
  host: f.id(),
  requestId: f.id(),
  decision: f.oneOf(DECISIONS),
  /** Signed too (approvalChallenge): a relay cannot turn an approve-once into a grant. */
  grant: f.optional(f.oneOf(GRANTS)),
  device: f.id(),
  assertion: assertionSchema,
});
export type CapabilityToken = Infer<typeof capabilityTokenSchema>;
