import type { Server } from 'node:http';

/** How long in-flight requests may take to finish after a stop signal before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 25_000;

/**
 * Stops serving gracefully: the listening socket closes at once (no new connections), idle
 * keep-alive connections are closed, requests in flight finish and their connections close after
 * their answer; after `graceMs` whatever is still open is cut. Resolves once the server is closed.
 */
export function closeGracefully(server: Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    cut.unref();
    // A keep-alive connection turns idle after its answer: close it then rather than at its timeout.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearTimeout(cut);
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}
