import type { IncomingMessage } from 'node:http';

/**
 * The address of the client a request comes from: the one place every limiter and log asks. An
 * express request answers with `req.ip` (which follows the app's `trust proxy` setting); a bare
 * node request (the check's fast path) with its socket's peer.
 */
export function clientAddress(req: IncomingMessage): string {
  return (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress ?? 'unknown';
}
