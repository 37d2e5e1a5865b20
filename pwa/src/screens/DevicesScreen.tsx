import { useEffect, useState } from 'preact/hooks';
import { revokeChallenge } from '../../../shared/device-auth/revokeChallenge.ts';
import { LIMITS } from '../../../shared/messages/limits.ts';
import { membersSchema, type Members } from '../../../shared/messages/relayViews.ts';
import { sanitizeText } from '../../../shared/text/sanitizeText.ts';
import {
  loadIdentity,
  loadLockScreenPrivacy,
  loadMemberships,
  loadPasskey,
  saveLockScreenPrivacy,
  type DeviceIdentity,
} from '../keystore.ts';
import { AllowedRules } from '../components/AllowedRules.tsx';
import { fetchState } from '../actions.ts';
import { fleetPath, relayCall } from '../relayApi.ts';
import { FACE_ID_CANCELLED, refusalText } from '../refusalText.ts';
import { navigate } from '../router.ts';
import { useAction } from '../useConnectivity.ts';
import { signWithPasskey } from '../webauthn.ts';

/** Each fleet's phones and hosts: rename a phone, revoke one. */
export function DevicesScreen() {
  const [identity, setIdentity] = useState<DeviceIdentity>();
  // Only the fleets whose relay listed them: one that no longer knows this phone has none to show.
  const [fleets, setFleets] = useState<{ fleet: string; members: Members }[]>([]);
  const [message, setMessage] = useState<string>();
  const [lockScreenPrivacy, setLockScreenPrivacy] = useState<boolean>();
  const [off, run] = useAction();

  const load = async () => {
    const me = await loadIdentity();
    const memberships = await loadMemberships();
    if (!me || !memberships[0]) return setMessage('This phone is not paired.');
    setIdentity(me);
    const listed = await Promise.all(
      memberships.map(async ({ fleet }) => ({
        fleet,
        result: await relayCall('GET', fleetPath(fleet, '/members'), membersSchema, { identity: me }),
      })),
    );
    setFleets(listed.flatMap(({ fleet, result }) => (result.ok ? [{ fleet, members: result.value }] : [])));
    const refused = listed.find(({ result }) => !result.ok)?.result;
    if (refused?.ok === false) setMessage(refusalText(refused));
  };
  /** The fleet's list, as the relay answered a change to it. */
  const show = (fleet: string, members: Members) =>
    setFleets((shown) => shown.map((listed) => (listed.fleet === fleet ? { fleet, members } : listed)));
  useEffect(() => void load(), []);
  useEffect(() => void loadLockScreenPrivacy().then(setLockScreenPrivacy), []);

  const choosePrivacy = async (on: boolean) => {
    setLockScreenPrivacy(on); // the box follows the tap at once; the worker reads what is saved
    await saveLockScreenPrivacy(on);
  };

  const rename = async (fleet: string, id: string, current: string) => {
    const typed = prompt('New name, in the app (computers keep the name it paired with)', current);
    if (typed === null || !identity) return;
    const name = sanitizeText(typed.trim(), { maxBytes: LIMITS.nameBytes, multiline: false }).text;
    if (!name) return setMessage('A name cannot be blank.');
    const result = await relayCall(
      'PATCH',
      fleetPath(fleet, `/devices/${encodeURIComponent(id)}`),
      membersSchema,
      { identity, body: { v: 1, name } },
    );
    if (!result.ok) return setMessage(refusalText(result));
    show(fleet, result.value);
    setMessage(undefined);
  };

  const revoke = async (fleet: string, members: Members, id: string, name: string) => {
    if (!identity) return;
    // Revoking can leave fewer phones than a resume takes: then no freeze could be lifted here.
    const left = members.devices.filter((device) => !device.revoked && device.id !== id).length;
    const state = await fetchState(identity, fleet);
    const needed = state.ok ? state.value.needed : 1;
    const warning =
      left === 0
        ? ' No phone would be left to approve, deny or lift a freeze.'
        : left < needed
          ? ` Only ${left} would be left, and a resume takes ${needed}: a freeze could be lifted only at the computer.`
          : '';
    const who = id === identity.id ? 'this phone' : name;
    if (!confirm(`Revoke ${who}? It could no longer approve, deny or vote.${warning}`)) return;
    const passkey = await loadPasskey();
    if (!passkey) return setMessage('This phone has no passkey.');
    let assertion;
    try {
      assertion = await signWithPasskey(passkey, await revokeChallenge({ fleet, device: id }));
    } catch {
      return setMessage(FACE_ID_CANCELLED);
    }
    const result = await relayCall(
      'DELETE',
      fleetPath(fleet, `/devices/${encodeURIComponent(id)}`),
      membersSchema,
      { identity, body: { v: 1, assertion } },
    );
    if (!result.ok) return setMessage(`Not revoked. ${refusalText(result)}`);
    show(fleet, result.value);
    setMessage(`Revoked ${name}.`);
  };

  return (
    <main class="screen">
      <header class="top">
        <h1>Devices</h1>
        <button type="button" class="link" onClick={() => navigate('/')}>
          Back
        </button>
      </header>
      {message && <p role="status">{message}</p>}
      {/* A section for each fleet (each computer's phones), named for its hosts; none where no
          fleet listed this phone: no empty headings. */}
      {fleets.map(({ fleet, members }) => (
        <section key={fleet} aria-label={members.hosts.map((host) => host.name).join(', ')}>
          <h2>Phones</h2>
          <ul class="members">
            {members.devices.map((device) => (
              <li key={device.id} class={device.revoked ? 'revoked' : ''}>
                <span>
                  {device.name}
                  {device.id === identity?.id ? ' (this phone)' : ''}
                  {device.revoked ? ' (revoked)' : ''}
                </span>
                {!device.revoked && (
                  <span class="member-actions">
                    {/* Each button names its phone: a screen reader lists buttons by their names alone. */}
                    <button
                      type="button"
                      aria-label={`Rename ${device.name}`}
                      disabled={off}
                      onClick={() => run(() => rename(fleet, device.id, device.name))}
                    >
                      Rename
                    </button>
                    <button
                      type="button"
                      class="deny"
                      aria-label={`Revoke ${device.name}`}
                      disabled={off}
                      onClick={() => run(() => revoke(fleet, members, device.id, device.name))}
                    >
                      Revoke
                    </button>
                  </span>
                )}
              </li>
            ))}
          </ul>
          <h2>Hosts</h2>
          <ul class="members">
            {members.hosts.map((host) => (
              <li key={host.id}>{host.name}</li>
            ))}
          </ul>
        </section>
      ))}
      <AllowedRules identity={identity} />
      <h2>This phone</h2>
      <label class="setting">
        <input
          type="checkbox"
          checked={lockScreenPrivacy ?? false}
          disabled={lockScreenPrivacy === undefined}
          onChange={(event) => void choosePrivacy(event.currentTarget.checked)}
        />
        <span>
          Lock-screen privacy: notifications say only “Approval needed on <em>host</em>”, not the command or
          the project.
        </span>
      </label>
    </main>
  );
}
