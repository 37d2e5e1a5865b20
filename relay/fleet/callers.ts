import type { RelayResult } from '../http/relayError.ts';
import type { DeviceRow, FleetContext, HostRow } from './context.ts';
import { signingDevice, type SignedRequest } from './deviceAuth.ts';
import { authenticateHost } from './hostAuth.ts';

/** An RPC's work in the fleet's context, synchronous or not. */
export type Serve<T> = (ctx: FleetContext) => RelayResult<T> | Promise<RelayResult<T>>;
/** The same, for a caller proven first. */
export type ServeAs<Caller, T> = (
  ctx: FleetContext,
  caller: Caller,
) => RelayResult<T> | Promise<RelayResult<T>>;

/** Work for a host: it runs only once the bearer token proves which host calls. */
export function asHost<T>(bearer: string | undefined, serve: ServeAs<HostRow, T>): Serve<T> {
  return async (ctx) => {
    const host = await authenticateHost(ctx, bearer);
    return host.ok ? serve(ctx, host.value) : host;
  };
}

/** Work for a phone: it runs only once the signed request proves which paired device calls. */
export function asDevice<T>(signed: SignedRequest, serve: ServeAs<DeviceRow, T>): Serve<T> {
  return async (ctx) => {
    const device = await signingDevice(ctx, signed);
    return device.ok ? serve(ctx, device.value) : device;
  };
}
