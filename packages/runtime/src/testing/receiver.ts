import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a receiver got, as it came (headers and raw body) and parsed. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The parsed `{type, timestamp, data}`. */
  event: { type: string; timestamp: string; data: Record<string, unknown> };
  headers: IncomingMessage['headers'];
}

export interface WebhookReceiver {
  /** Where to point an endpoint (`http://127.0.0.1:PORT/hooks`). */
  url: string;
  /** Every POST so far, in arrival order (including those answered with an error). */
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on the loopback interface for tests: records each POST and answers with
 * the status `respond` gives (default 200), after its delay if it returns one.
 */
export async function startWebhookReceiver(
  respond: (hook: ReceivedWebhook, index: number) => number | { status: number; delayMs?: number; body?: string } = () => 200,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: ReceivedWebhook['event'];
      try {
        event = JSON.parse(body);
      } catch {
        event = { type: '', timestamp: '', data: {} };
      }
      const hook: ReceivedWebhook = {
        id: String(req.headers['webhook-id'] ?? ''),
        timestamp: String(req.headers['webhook-timestamp'] ?? ''),
        signature: String(req.headers['webhook-signature'] ?? ''),
        body,
        event,
        headers: req.headers,
      };
      received.push(hook);
      const answer = respond(hook, received.length - 1);
      const { status, delayMs, body: text } = typeof answer === 'number' ? { status: answer, delayMs: 0, body: undefined } : answer;
      setTimeout(() => {
        res.statusCode = status;
        res.end(text ?? (status < 300 ? 'ok' : 'not today'));
      }, delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
