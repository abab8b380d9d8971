import net from 'node:net';

/** What the proxy does to the connections it applies to. */
export interface FaultProxyFaults {
  /** Stop forwarding in both directions without closing (bytes dropped, no error: a dead route). */
  stalled: boolean;
  /** Share (0..1) of LISTEN notifications (protocol message `A`) dropped on their way to the client. */
  dropNotifications: number;
  /** Milliseconds each notification is held back from its arrival before it is forwarded (what follows keeps its order). */
  delayNotificationsMs: number;
  /**
   * Cut the connection at the first statement (a simple Query or a Parse message) whose text
   * matches `query`: `before` it reaches the server (it never runs), or `after` the server has
   * finished it (ReadyForQuery), none of its answer reaching the client (a COMMIT that landed but
   * was never acknowledged). Applies once, then clears.
   */
  cutAt?: { query: RegExp; when: 'before' | 'after' };
}

/**
 * A TCP proxy in front of PostgreSQL for fault tests (never used by the service itself): it can
 * stall connections, drop or delay notifications, cut one connection at a statement, and cut everything, for the connections whose
 * startup message names an `application_name` matching `appliesTo` (all when absent), so a test can
 * hurt an instance's change feed while its pool works. Server-to-client bytes are read as protocol
 * messages (one type byte, a 4-byte length): no SSL is negotiated through it.
 */
export class FaultProxy {
  readonly faults: FaultProxyFaults = { stalled: false, dropNotifications: 0, delayNotificationsMs: 0 };
  /** Notifications dropped so far. */
  dropped = 0;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    private readonly appliesTo: RegExp | undefined,
  ) {}

  /** Starts a proxy on a free loopback port in front of `target`. */
  static async start(target: { host: string; port: number }, options: { appliesTo?: RegExp } = {}): Promise<FaultProxy> {
    const server = net.createServer();
    const proxy = new FaultProxy(server, options.appliesTo);
    server.on('connection', (client) => proxy.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** A connection string to the target through this proxy. */
  url(targetUrl: string): string {
    const u = new URL(targetUrl);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Closes every connection now (as a crash of the route would, with resets). */
  cut(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket, target: { host: string; port: number }): void {
    const upstream = net.connect(target.port, target.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    let applies: boolean | undefined = this.appliesTo ? undefined : true;
    let first = true;
    let cutOnAnswer = false;
    client.on('data', (chunk: Buffer) => {
      if (first) {
        first = false;
        // The startup message: length, protocol version, then name/value pairs ending in a NUL.
        const pairs = chunk.subarray(8).toString('utf8').split('\0');
        const at = pairs.indexOf('application_name');
        applies = !this.appliesTo || (at >= 0 && this.appliesTo.test(pairs[at + 1] ?? ''));
      }
      if (applies && this.faults.stalled) return;
      const cut = this.faults.cutAt;
      // 'Q' (Query) or 'P' (Parse): a statement's text; never the startup or password messages.
      if (
        applies &&
        cut &&
        (chunk[0] === 0x51 || chunk[0] === 0x50) &&
        ((cut.query.lastIndex = 0), cut.query.test(chunk.toString('latin1')))
      ) {
        this.faults.cutAt = undefined;
        if (cut.when === 'before') return end();
        cutOnAnswer = true;
      }
      upstream.write(chunk);
    });
    let pending = Buffer.alloc(0);
    let queue: Promise<void> = Promise.resolve();
    upstream.on('data', (chunk: Buffer) => {
      if (applies && this.faults.stalled) return;
      if (!applies) {
        queue = queue.then(() => void client.write(chunk));
        return;
      }
      // Read as messages from the first byte, so faults can start at any moment.
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(1) + 1;
        if (pending.length < length) break;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (cutOnAnswer) {
          // Nothing of the cut statement's answer reaches the client; its end cuts the connection.
          if (message[0] === 0x5a /* 'Z': ReadyForQuery */) return end();
          continue;
        }
        if (message[0] === 0x41 /* 'A': NotificationResponse */) {
          if (Math.random() < this.faults.dropNotifications) {
            this.dropped++;
            continue;
          }
          // Held back by the delay from its arrival (the stream shifted, its order kept).
          const due = Date.now() + this.faults.delayNotificationsMs;
          if (this.faults.delayNotificationsMs > 0)
            queue = queue.then(() => new Promise((r) => setTimeout(r, Math.max(0, due - Date.now()))));
        }
        queue = queue.then(() => void client.write(message));
      }
    });
  }
}
