/**
 * Regenerates the generated parts of docs/protocol.md: the field tables (from the schemas in
 * shared/) and a worked example of real bytes (made with the software authenticator).
 *
 *   npx tsx scripts/protocol-doc.ts
 *
 * tests/shared/protocolDoc.node.test.ts checks that the example in the doc still verifies.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { detailsBinding } from '../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../shared/approvals/approvalChallenge.ts';
import { canonicalize } from '../shared/canonical/canonicalize.ts';
import { sealRequestDetails } from '../shared/e2e/requestDetailsBox.ts';
import { toBase64url } from '../shared/encoding/base64url.ts';
import { signEnvelope } from '../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../shared/kill-switch/freezeId.ts';
import { resumeChallenge } from '../shared/kill-switch/resumeChallenge.ts';
import type { ApprovalRequest } from '../shared/messages/approvals.ts';
import { MESSAGE_SCHEMAS } from '../shared/messages/catalog.ts';
import { derivePairingKeys } from '../shared/pairing/pairingKeys.ts';
import { pairingLink } from '../shared/pairing/pairingLink.ts';
import { shortCode } from '../shared/pairing/pairingTranscript.ts';
import { verifyPairingCompletion } from '../shared/pairing/verifyPairingCompletion.ts';
import type { Field, FieldSpec } from '../shared/schema/field.ts';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { NOW, requestDetails, signToken } from './lib/approvalFixture.ts';
import {
  completePairing,
  createHost,
  createOffer,
  createPhone,
  TEST_ORIGIN,
  TEST_RP_ID,
} from './lib/softwarePhone.ts';

const DOC = new URL('../docs/protocol.md', import.meta.url);

function describeSpec(spec: FieldSpec): string {
  switch (spec.kind) {
    case 'id':
      return 'id';
    case 'text':
      return `clean text ≤ ${spec.maxBytes} B${spec.multiline ? ', multi-line' : ''}`;
    case 'base64url':
      return spec.minBytes === spec.maxBytes
        ? `base64url, ${spec.minBytes} B`
        : `base64url, ${spec.minBytes}–${spec.maxBytes} B`;
    case 'integer':
      return spec.min === 1_577_836_800_000 ? 'ms since epoch' : `integer ${spec.min}–${spec.max}`;
    case 'boolean':
      return 'boolean';
    case 'literal':
      return `\`${JSON.stringify(spec.value)}\``;
    case 'oneOf':
      return spec.values.map((value) => `\`${value}\``).join(' \\| ');
    case 'url':
      return `https URL ≤ ${spec.maxBytes} B`;
    case 'array':
      return `array (≤ ${spec.maxItems}) of ${describeSpec(spec.item.spec)}`;
    case 'object':
      return 'object';
    case 'variant':
      return `one of, by \`${spec.tag}\``;
  }
}

function fieldRows(field: Field<unknown>, prefix = ''): string[] {
  const spec = field.spec;
  if (spec.kind === 'variant') {
    return Object.entries(spec.variants).flatMap(([tag, variant]) => [
      `| **${spec.tag} = \`${tag}\`** | | |`,
      ...fieldRows(variant, prefix),
    ]);
  }
  if (spec.kind !== 'object') return [];
  return Object.entries(spec.fields).flatMap(([name, member]) => {
    const path = `${prefix}${name}`;
    const row = `| \`${path}\` | ${describeSpec(member.spec)} | ${member.optional ? 'optional' : 'required'} |`;
    const inner = member.spec.kind === 'array' ? member.spec.item : member;
    const nested =
      inner.spec.kind === 'object'
        ? fieldRows(inner, `${path}${member.spec.kind === 'array' ? '[]' : ''}.`)
        : [];
    return [row, ...nested];
  });
}

function fieldTables(): string {
  return Object.entries(MESSAGE_SCHEMAS)
    .map(([name, schema]) =>
      [`#### ${name}`, '', '| member | value | |', '|---|---|---|', ...fieldRows(schema)].join('\n'),
    )
    .join('\n\n');
}

const block = (label: string, value: unknown) =>
  `\`\`\`json example=${label}\n${JSON.stringify(value, null, 2)}\n\`\`\``;
const text = (label: string, value: string) => `\`\`\`text example=${label}\n${value}\n\`\`\``;

async function workedExample(): Promise<string> {
  const host = await createHost();
  const phone = await createPhone('Ada’s phone');
  const { offer, secret } = await createOffer(host, { now: NOW, fleet: 'fleet-7Qk2' });
  const completion = await completePairing(phone, offer, secret);
  const paired = await verifyPairingCompletion(completion, offer, secret, {
    origins: [TEST_ORIGIN],
    rpId: TEST_RP_ID,
  });
  if (!paired.ok) throw paired.error;
  const { macKey } = await derivePairingKeys(secret);

  const details = requestDetails(
    { fleet: offer.fleet, host, phone, device: paired.value },
    { requestId: 'req-0001' },
  );
  const box = await sealRequestDetails(details, { id: phone.id, ecdhKey: phone.ecdhKey });
  const binding = await detailsBinding(details);
  const approvalRequest: ApprovalRequest = {
    v: PROTOCOL_VERSION,
    fleet: details.fleet,
    host: details.host,
    requestId: details.requestId,
    conversation: 'session-42',
    dedupKey: 'session-42.toolu_01',
    risk: details.risk,
    createdAt: details.createdAt,
    exp: details.exp,
    requestHash: binding.requestHash,
    nonce: details.nonce,
    sealed: [{ device: phone.id, box }],
  };
  const challengeInput = { v: PROTOCOL_VERSION, ...binding };
  const token = await signToken(phone, binding);
  const deny = await signEnvelope(
    'deny',
    { fleet: details.fleet, host: details.host, requestId: details.requestId },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
    NOW + 1000,
  );
  const freeze = await signEnvelope(
    'freeze',
    { fleet: details.fleet, reason: 'prod incident 412' },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
    NOW + 2000,
  );
  const freezeInForce = await freezeId(freeze);
  const vote = {
    v: PROTOCOL_VERSION,
    fleet: details.fleet,
    freeze: freezeInForce,
    device: phone.id,
    assertion: await phone.authenticator.assert({
      rpId: TEST_RP_ID,
      origin: TEST_ORIGIN,
      challenge: await resumeChallenge({ fleet: details.fleet, freeze: freezeInForce }),
    }),
  };

  return [
    `Made at ${new Date(NOW).toISOString()} (\`now\` = ${NOW}) for origin \`${TEST_ORIGIN}\`, RP ID \`${TEST_RP_ID}\`. ` +
      'Every value below is real: the test `tests/shared/protocolDoc.node.test.ts` re-verifies them.',
    '',
    '**1. Pairing.** The daemon creates an offer, whose `offerId` and `offerToken` derive from the secret, and shows this link as a QR code (the secret is in the fragment; the phone finds the offer, and its fleet, by `offerId`):',
    text('PairingLink', pairingLink({ origin: TEST_ORIGIN, secret })),
    block('PairingOffer', offer),
    'The phone answers with its keys and passkey registration, under the MAC:',
    block('PairingCompletion', completion),
    'The phone then shows the short code, which the person types on the terminal running `latch pair` (or compares, where it has none):',
    text('ShortCode', await shortCode(macKey, offer, completion)),
    'and the daemon stores:',
    block('PairedDevice', paired.value),
    '**2. A request.** The details the person will read:',
    block('RequestDetails', details),
    'Their canonical form, whose SHA-256 is `requestHash`:',
    text('CanonicalRequestDetails', canonicalize(details)),
    'What the relay receives (the details only as a sealed box per phone):',
    block('ApprovalRequest', approvalRequest),
    '**3. Approve.** The challenge is SHA-256 of this canonical JSON:',
    text('ChallengeInput', canonicalize(challengeInput)),
    text('Challenge', toBase64url(await approvalChallenge(binding))),
    'The phone signs it with Face ID; the capability token it returns:',
    block('CapabilityToken', token),
    '**4. Deny, freeze, resume.** A deny and a freeze signed with the device key:',
    block('DenyEnvelope', deny),
    block('FreezeEnvelope', freeze),
    'The id of that freeze, SHA-256 of its canonical JSON without `sig` (`freezeId`), and a vote to end it:',
    text('FreezeId', freezeInForce),
    block('ResumeVote', vote),
    'The pairing secret of this example, for checking the MACs:',
    text('PairingSecret', toBase64url(secret)),
  ].join('\n\n');
}

function replaceBetween(doc: string, name: string, content: string): string {
  const start = `<!-- generated:${name}:start -->`;
  const end = `<!-- generated:${name}:end -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/protocol.md lacks the ${name} markers`);
  return `${doc.slice(0, from + start.length)}\n${content}\n${doc.slice(to)}`;
}

let doc = readFileSync(DOC, 'utf8');
doc = replaceBetween(doc, 'fields', fieldTables());
doc = replaceBetween(doc, 'example', await workedExample());
writeFileSync(DOC, doc);
console.log('docs/protocol.md regenerated');
