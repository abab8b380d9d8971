import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a client may take, and how many connections one address may hold (`HTTP_*` settings). */
export interface HttpServerLimits {
  /** From a request's first byte to the end of its headers (`HTTP_HEADERS_TIMEOUT_MS`). */
  headersTimeoutMs: number;
  /** From a request's first byte to the end of its body: a slow body is cut off here (`HTTP_REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs: number;
  /** A connection that moves no byte either way for this long is closed (`HTTP_IDLE_TIMEOUT_MS`). */
  idleTimeoutMs: number;
  /** How long an idle keep-alive connection waits for its next request. */
  keepAliveTimeoutMs: number;
  /** Open connections one peer address may hold; 0: no cap (behind a proxy, which caps) (`HTTP_MAX_CONNECTIONS_PER_ADDRESS`). */
  maxConnectionsPerAddress: number;
  /** How often Node looks for requests past their timeouts (the timeouts' granularity). */
  checkIntervalMs: number;
}

export const DEFAULT_HTTP_SERVER_LIMITS: HttpServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnectionsPerAddress: 256,
  checkIntervalMs: 1_000,
};

const pathOfSocket = new WeakMap<object, string>();

/** The path of the last request a connection began (for answering a request Node cut off by a timeout). */
export const lastRequestPath = (socket: object): string | undefined => pathOfSocket.get(socket);

/** What the connection cap did (for tests and metrics). */
export interface ConnectionCapStats {
  /** Connections refused because their address held the cap. */
  refused: number;
  /** Addresses holding at least one connection now. */
  addresses: number;
}

/**
 * The HTTP server every Tollgate process serves with (the combined server, the standalone apps):
 * headers, whole-request (so body) and idle timeouts, and a cap on the connections one address may
 * hold, so slow or hoarding clients cannot keep sockets and memory without end. A request cut off
 * by a timeout gets Node's `clientError` (408), which `answerClientErrors` words per generation.
 */
export function createHttpServer(
  listener: RequestListener,
  limits: HttpServerLimits = DEFAULT_HTTP_SERVER_LIMITS,
): Server & { connectionCap(): ConnectionCapStats } {
  const server = createServer(
    {
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    listener,
  );
  server.on('request', (req: IncomingMessage) => pathOfSocket.set(req.socket, req.url ?? '/'));
  server.setTimeout(limits.idleTimeoutMs, (socket: Socket) => socket.destroy());
  const open = new Map<string, number>();
  let refused = 0;
  if (limits.maxConnectionsPerAddress > 0) {
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const held = open.get(address) ?? 0;
      if (held >= limits.maxConnectionsPerAddress) {
        refused++;
        return void socket.destroy();
      }
      open.set(address, held + 1);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left > 0) open.set(address, left);
        else open.delete(address);
      });
    });
  }
  return Object.assign(server, { connectionCap: () => ({ refused, addresses: open.size }) });
}
