/** The wire version. It changes only for an incompatible change; every parser rejects any other. */
export const PROTOCOL_VERSION = 1;
export type ProtocolVersion = typeof PROTOCOL_VERSION;
