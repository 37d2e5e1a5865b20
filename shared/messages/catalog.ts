import type { Field } from '../schema/field.ts';
import { approvalRequestSchema, capabilityTokenSchema, requestDetailsSchema } from './approvals.ts';
import {
  denyEnvelopeSchema,
  freezeEnvelopeSchema,
  pairConfirmEnvelopeSchema,
  revokeGrantEnvelopeSchema,
} from './envelopes.ts';
import { hostEventSchema, hostFrameSchema } from './events.ts';
import { fleetStateSchema, resumeVoteSchema } from './killSwitch.ts';
import { pairConfirmRequestSchema, pairingCompletionSchema, pairingOfferSchema } from './pairing.ts';
import {
  membersSchema,
  offerCreatedSchema,
  offerStatusSchema,
  pairConfirmedSchema,
  requestCreatedSchema,
  requestListSchema,
  requestWithdrawnSchema,
} from './relayViews.ts';
import { pushMessageSchema } from './pushMessages.ts';

/** Every message of the protocol by name: the docs and the property tests walk this list. */
export const MESSAGE_SCHEMAS: Readonly<Record<string, Field<unknown>>> = {
  PairingOffer: pairingOfferSchema,
  PairingCompletion: pairingCompletionSchema,
  PairConfirmEnvelope: pairConfirmEnvelopeSchema,
  PairConfirmRequest: pairConfirmRequestSchema,
  PairConfirmed: pairConfirmedSchema,
  OfferStatus: offerStatusSchema,
  OfferCreated: offerCreatedSchema,
  RequestDetails: requestDetailsSchema,
  ApprovalRequest: approvalRequestSchema,
  RequestCreated: requestCreatedSchema,
  RequestWithdrawn: requestWithdrawnSchema,
  CapabilityToken: capabilityTokenSchema,
  DenyEnvelope: denyEnvelopeSchema,
  RevokeGrantEnvelope: revokeGrantEnvelopeSchema,
  FreezeEnvelope: freezeEnvelopeSchema,
  ResumeVote: resumeVoteSchema,
  FleetState: fleetStateSchema,
  HostEvent: hostEventSchema,
  PushMessage: pushMessageSchema,
  HostFrame: hostFrameSchema,
  RequestList: requestListSchema,
  Members: membersSchema,
};
