import { createServer } from 'node:net';

/**
 * Whether a process already listens on `host:port`. We try to listen there ourselves, as wrangler
 * will: a connect would miss a listener that accepts nothing, and would not tell a port we may not
 * bind from one that is free. Anything other than EADDRINUSE (EACCES below 1024) is thrown.
 */
export function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolve(true) : reject(error),
    );
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(false)));
  });
}
