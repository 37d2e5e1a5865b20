import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readProcessStat, type ProcessStat } from './processStat.ts';

/** The environment variable that names one run of `latch exec` in everything it starts. */
export const RUN_MARKER = 'LATCH_EXEC_RUN';

/** The daemon a run is made for, by its socket: another daemon's runs (a test's, another home's) are not its. */
export const daemonOfRuns = (socket: string) =>
  createHash('sha256').update(resolve(socket)).digest('hex').slice(0, 16);

/** A new run's marker: its daemon's, then its own. */
export const runMarker = (socket: string) => `${daemonOfRuns(socket)}.${randomBytes(16).toString('hex')}`;

/** Live processes by pid, each with its start time (see ProcessStat.start). */
export type Members = Map<number, number>;

/**
 * Another marker than latch exec's: the test suite marks its runs the same way
 * (tests/support/noOrphans.ts), and spares vitest's own workers, which carry the mark too.
 */
export interface MarkerOptions {
  /** The marker's name; RUN_MARKER by default. */
  variable?: string;
  /**
   * Marked processes that are not members (their marked children still are); a function is read
   * afresh on each pass.
   */
  spare?: ReadonlySet<number> | (() => ReadonlySet<number>);
}

/**
 * Every live process of one run of `latch exec`, from one pass over /proc: the command, its
 * descendants by parent pid, and every process that carries the run's marker in its environment
 * with its own descendants. The marker finds what left the tree: a child that called setsid and
 * was reparented, or a double fork, keeps the environment it inherited. `known` are members seen
 * before, still members while the same process lives, whoever its parent is now.
 */
export function findRunProcesses(
  root: { pid: number; start: number } | undefined,
  /** One run's marker, or `{ daemon }`: every run made for that daemon (see runMarker). */
  marker: string | { daemon: string },
  known: Members,
  { variable = RUN_MARKER, spare }: MarkerOptions = {},
): Members {
  const live = new Map<number, ProcessStat>();
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!/^\d+$/.test(name) || pid === process.pid) continue;
    const stat = readProcessStat(pid);
    // A zombie has ended: nothing to stop, and its pid is the parent's to reap.
    if (!stat || stat.state === 'Z' || stat.state === 'X') continue;
    live.set(pid, stat);
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  }
  const same = (pid: number, start: number) => live.get(pid)?.start === start;
  const seeds: number[] = [];
  if (root && same(root.pid, root.start)) seeds.push(root.pid);
  for (const [pid, start] of known) if (same(pid, start)) seeds.push(pid);
  const named = `${variable}=`;
  const marks = (entry: string) =>
    typeof marker === 'string' ? entry === named + marker : entry.startsWith(`${named}${marker.daemon}.`);
  const spared = typeof spare === 'function' ? spare() : spare;
  for (const pid of live.keys()) if (!spared?.has(pid) && carries(pid, marks)) seeds.push(pid);

  // Breadth first from the command: parents come before their children, so a pass that stops
  // them stops a parent before it can fork again.
  const members: Members = new Map();
  for (let pid = seeds.shift(); pid !== undefined; pid = seeds.shift()) {
    if (members.has(pid)) continue;
    members.set(pid, live.get(pid)!.start);
    seeds.push(...(children.get(pid) ?? []));
  }
  return members;
}

/** Whether the process started with such an entry in its environment (another user's: unreadable, no). */
function carries(pid: number, marks: (entry: string) => boolean): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').some(marks);
  } catch {
    return false;
  }
}
