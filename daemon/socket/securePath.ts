import { lstatSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LastingFault } from '../lastingFault.ts';

/** A path that others could reach into: refused by clients, and by the daemon at its start. */
export class InsecurePathError extends LastingFault {
  readonly code = 'insecure_socket_path';
}

/** A step of the socket's path is missing: no daemon has made its socket there. */
export class NoSocketError extends Error {
  readonly code = 'no_socket';
}

/**
 * The most bytes of a Unix socket's path: sun_path holds 108 on Linux, where a path that fills it
 * with no closing NUL binds and connects (Node 20, 22 and 24, measured); 104 on macOS, taken
 * with its NUL there (not measured). Past it, Node 20's libuv binds a cut-short path (a socket
 * in an unchecked folder) and Node 24 fails with EINVAL: neither says why.
 */
const MOST_SOCKET_PATH_BYTES = process.platform === 'darwin' ? 103 : 108;

/** The socket's path is longer than a Unix socket's may be: no daemon can listen there. */
export class SocketPathTooLongError extends LastingFault {
  readonly code = 'socket_path_too_long';
}

/** Throws SocketPathTooLongError for a path no socket can be bound at, saying how to shorten it. */
export function checkSocketPathLength(socketPath: string): void {
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > MOST_SOCKET_PATH_BYTES)
    throw new SocketPathTooLongError(
      `the socket path ${socketPath} is ${bytes} bytes; Unix sockets allow ${MOST_SOCKET_PATH_BYTES}: use a shorter XDG_RUNTIME_DIR or LATCH_HOME`,
    );
}

/**
 * Walks the socket's path from `/` with lstat, as a client must before connecting (design.md):
 * no step may be a symbolic link, owned by another user (root excepted), or writable by group or
 * others, except a root-owned sticky directory such as /tmp, where nobody else can rename or
 * remove what we own. The socket itself must be ours and no one else's. Throws
 * SocketPathTooLongError, InsecurePathError, or NoSocketError where a step is missing.
 */
export function checkSocketPath(socketPath: string, uid: number = process.getuid?.() ?? 0): void {
  checkSocketPathLength(socketPath);
  const absolute = resolve(socketPath);
  const steps: string[] = [];
  for (let path = absolute; ; path = dirname(path)) {
    steps.unshift(path);
    if (path === dirname(path)) break;
  }
  for (const step of steps) {
    let stat;
    try {
      stat = lstatSync(step);
    } catch {
      throw new NoSocketError(`${step} does not exist`);
    }
    if (stat.isSymbolicLink()) throw new InsecurePathError(`${step} is a symbolic link`);
    if (stat.uid !== uid && stat.uid !== 0)
      throw new InsecurePathError(`${step} is owned by another user (uid ${stat.uid})`);
    const writableByOthers = (stat.mode & 0o022) !== 0;
    const stickyRootDirectory = stat.isDirectory() && (stat.mode & 0o1000) !== 0 && stat.uid === 0;
    if (writableByOthers && !stickyRootDirectory) {
      throw new InsecurePathError(
        `${step} is writable by group or others (mode ${(stat.mode & 0o7777).toString(8)})`,
      );
    }
  }
  const socket = lstatSync(absolute);
  if (!socket.isSocket()) throw new InsecurePathError(`${absolute} is not a socket`);
  if (socket.uid !== uid) throw new InsecurePathError(`${absolute} is not owned by you`);
  if ((socket.mode & 0o077) !== 0)
    throw new InsecurePathError(
      `${absolute} is readable or writable by others (mode ${(socket.mode & 0o777).toString(8)})`,
    );
}
