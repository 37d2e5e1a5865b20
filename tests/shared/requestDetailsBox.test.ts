import { beforeEach, describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical/canonicalize.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { open, seal, SEALED_BOX_OVERHEAD } from '../../shared/e2e/sealedBox.ts';
import {
  associatedData,
  openRequestDetails,
  sealRequestDetails,
  type BoxContext,
} from '../../shared/e2e/requestDetailsBox.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { pairedFleet, requestDetails, type PairedFleet } from '../../scripts/lib/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';

let fleet: PairedFleet;
let phone: TestPhone;
let details: RequestDetails;
let context: BoxContext;

beforeEach(async () => {
  fleet = await pairedFleet();
  phone = fleet.phone;
  details = requestDetails(fleet);
  context = { fleet: details.fleet, host: details.host, requestId: details.requestId, device: phone.id };
});

const recipient = (who: TestPhone) => ({ privateKey: who.ecdhKeys.privateKey, publicKeyRaw: who.ecdhKeyRaw });
const sealFor = (who: TestPhone, what: RequestDetails = details) =>
  sealRequestDetails(what, { id: who.id, ecdhKey: who.ecdhKey });

describe('end-to-end encryption of request details', () => {
  it('round-trips: the phone reads exactly what the daemon sealed', async () => {
    const result = await openRequestDetails(await sealFor(phone), recipient(phone), context);
    expect(result).toEqual({ ok: true, value: details });
  });

  it('hides the command from whoever carries the box', async () => {
    const box = fromBase64url(await sealFor(phone));
    expect(new TextDecoder('latin1').decode(box)).not.toContain('rm -rf');
  });

  it('seals each time afresh, so equal requests give unrelated boxes', async () => {
    expect(await sealFor(phone)).not.toBe(await sealFor(phone));
  });

  it('refuses to open with another phone’s key', async () => {
    const other = await createPhone('Other');
    expectRefused(
      await openRequestDetails(await sealFor(phone), recipient(other), { ...context, device: other.id }),
      'decrypt_failed',
    );
  });

  it.each([1, 30, 70, 90, 200])('refuses a box with byte %i flipped', async (index) => {
    const box = fromBase64url(await sealFor(phone));
    box[index % box.length]! ^= 0x01;
    expectRefused(await openRequestDetails(toBase64url(box), recipient(phone), context), 'decrypt_failed');
  });

  it('refuses a truncated box', async () => {
    const box = fromBase64url(await sealFor(phone));
    expectRefused(
      await openRequestDetails(
        toBase64url(box.subarray(0, SEALED_BOX_OVERHEAD - 1)),
        recipient(phone),
        context,
      ),
      'decrypt_failed',
    );
  });

  it.each<[string, Partial<BoxContext>]>([
    ['another request', { requestId: 'another-request' }],
    ['another host', { host: 'another-host' }],
    ['another fleet', { fleet: 'another-fleet' }],
    ['another device', { device: 'another-device' }],
  ])('refuses a box moved onto %s (associated data)', async (_what, change) => {
    expectRefused(
      await openRequestDetails(await sealFor(phone), recipient(phone), { ...context, ...change }),
      'decrypt_failed',
    );
  });

  it('refuses details that name another request than the box’s context', async () => {
    // A daemon bug or a confused sealer: the box opens, but its content disagrees with its label.
    const mislabelled = await seal(
      canonicalBytes({ ...details, requestId: 'other' }),
      phone.ecdhKeyRaw,
      associatedData(context),
    );
    expectRefused(
      await openRequestDetails(toBase64url(mislabelled), recipient(phone), context),
      'context_mismatch',
    );
  });

  it('refuses a box that is not base64url', async () => {
    expectRefused(await openRequestDetails('not base64!', recipient(phone), context), 'decrypt_failed');
  });

  it('checks the opened details like any untrusted message', async () => {
    const unclean = { ...details, title: 'rm\u202e -rf' };
    const box = await seal(canonicalBytes(unclean), phone.ecdhKeyRaw, associatedData(context));
    expectRefused(await openRequestDetails(toBase64url(box), recipient(phone), context), 'unclean_text');
  });

  it('fits the largest details within the wire cap for a box', async () => {
    const largest = {
      ...details,
      title: 'é'.repeat(LIMITS.titleBytes / 2),
      detail: '€'.repeat(Math.floor(LIMITS.detailBytes / 3)),
      description: 'é'.repeat(LIMITS.titleBytes / 2),
      project: 'é'.repeat(LIMITS.nameBytes / 2),
      session: 'é'.repeat(LIMITS.nameBytes / 2),
      diff: '€'.repeat(Math.floor(LIMITS.diffBytes / 3)),
    };
    const box = fromBase64url(await sealFor(phone, largest));
    expect(box.length).toBeLessThanOrEqual(LIMITS.sealedBoxBytes);
  });

  it('fits a command’s largest details, its notes in place of a diff, within the wire cap', async () => {
    const notes = Array.from({ length: LIMITS.notesPerRequest }, () =>
      '€'.repeat(Math.floor(LIMITS.notesBytes / LIMITS.notesPerRequest / 3)),
    );
    const largest = {
      ...details,
      title: 'é'.repeat(LIMITS.titleBytes / 2),
      detail: '€'.repeat(Math.floor(LIMITS.detailBytes / 3)),
      notes,
      description: 'é'.repeat(LIMITS.titleBytes / 2),
      project: 'é'.repeat(LIMITS.nameBytes / 2),
      session: 'é'.repeat(LIMITS.nameBytes / 2),
    };
    const box = fromBase64url(await sealFor(phone, largest));
    expect(box.length).toBeLessThanOrEqual(LIMITS.sealedBoxBytes);
    const tooMany = [...notes, 'one more'];
    const refused = await seal(
      canonicalBytes({ ...largest, notes: tooMany }),
      phone.ecdhKeyRaw,
      associatedData(context),
    );
    expectRefused(
      await openRequestDetails(toBase64url(refused), recipient(phone), context),
      'field_too_large',
    );
  });

  it('refuses the raw box under other associated data', async () => {
    const box = await seal(utf8('secret'), phone.ecdhKeyRaw, utf8('context A'));
    await expect(open(box, phone.ecdhKeys.privateKey, phone.ecdhKeyRaw, utf8('context A'))).resolves.toEqual(
      utf8('secret'),
    );
    await expect(
      open(box, phone.ecdhKeys.privateKey, phone.ecdhKeyRaw, utf8('context B')),
    ).rejects.toMatchObject({ code: 'decrypt_failed' });
  });
});
