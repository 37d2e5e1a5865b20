import { DurableObject } from 'cloudflare:workers';
import { countBillable } from '../billing/billableMeter.ts';

/**
 * How long an entry outlives its offer: a phone that scans a stale code then hears "expired"
 * from the fleet rather than "no such offer". Offers live at most an hour (fleet/pairing.ts).
 */
const KEPT_AFTER_EXPIRY_MS = 3600_000;

interface Entry {
  fleet: string;
  exp: number;
}

/**
 * Which fleet holds a pairing offer, found by the offer's id alone: one object per offer id
 * (`idFromName(offerId)`), deleted by its alarm once the offer is long gone. The id derives from
 * the QR secret, so the phone that scanned a code knows it without the fleet, which keeps the
 * link short. What this answers is a claim: the phone trusts only an offer its host MAC'd under
 * that secret (shared/pairing/verifyPairingOffer.ts), and the fleet is part of what is MAC'd.
 */
export class OfferIndex extends DurableObject<Env> {
  /**
   * Records the fleet of a new offer. False when the id already names another fleet's offer: ids
   * derive from random 128-bit secrets, so that is never chance, and the first holder keeps it.
   */
  async record(fleet: string, exp: number): Promise<boolean> {
    const entry = await this.ctx.storage.get<Entry>('entry');
    if (entry && entry.fleet !== fleet) return false;
    const kept = Math.max(exp, entry?.exp ?? 0);
    await this.ctx.storage.put('entry', { fleet, exp: kept } satisfies Entry);
    await this.ctx.storage.setAlarm(kept + KEPT_AFTER_EXPIRY_MS);
    return true;
  }

  /** The fleet the offer was recorded for, if it is still kept. */
  async fleet(): Promise<string | undefined> {
    return (await this.ctx.storage.get<Entry>('entry'))?.fleet;
  }

  override async alarm(): Promise<void> {
    countBillable('alarms');
    await this.ctx.storage.deleteAll();
  }
}
