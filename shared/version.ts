/** The wire version. It changes only for an incompatible change; every parser rejects any other. */
export type ProtocolVersion = 1;
// Annotated, not inferred, so the literal type survives inside object literals.
export const PROTOCOL_VERSION: ProtocolVersion = 1;
